// Package bench measures the engine against the goals of the performance
// issue: Placement requests per idle and per k-changed cycle, engine CPU
// per idle cycle, cold-start write rate against a bare client, peak RSS,
// restart time, and nova's request pattern for the same fleet. Absolute
// times on shared machines are noisy, so it reports medians and ratios
// measured inside one run. cmd/rpbench runs it and writes BENCHMARKS.md.
//
// It is a measuring tool: it must never be imported by the engine.
package bench
