// Package bench measures the engine against the goals of the performance
// issue: Placement requests per idle and per k-changed cycle, engine CPU
// per idle cycle, cold-start write rate against a bare client, peak RSS,
// restart time; nova 26.2.2 measured side by side over the same real Ironic
// (TestNovaSideBySide); the cold-start curve against engine.concurrency on a
// production-shaped Placement (uWSGI + MariaDB, scripts/placement-prod) and
// on the sqlite one; and the POST /reshaper experiment (bench-only). Absolute
// times on shared machines are noisy, so it reports medians and ratios
// measured inside one run. cmd/rpbench runs it and writes reports/BENCHMARKS.md.
//
// It is a measuring tool: it must never be imported by the engine.
package bench
