// Package doctest holds the tests that keep the manual true: every config
// key in docs/CONFIGURATION.md with its default as the code has it, every
// report field in docs/REPORT.md, every metric in docs/OPERATIONS.md, and
// every package and every file of engine/ in docs/LAYOUT.md. They read
// the code by reflection and its sources, and fail naming what is missing.
//
// It has no product code and must never be imported.
package doctest
