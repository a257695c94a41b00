// Package fakeironic is an in-memory Ironic node API for the plugin's unit
// tests and benchmarks: GET /, /v1/, /v1/nodes and /v1/nodes/{uuid} with
// the real 21.4 behaviour the plugin depends on, as observed on the real
// service: microversion headers and
// 406s, fields=, limit capped at max_limit, marker paging whose next link
// keeps only sort, fields, limit and marker (it drops every filter), a 404
// for a deleted marker, and Ironic's nested JSON error bodies. Hooks inject
// faults between pages.
//
// It is for tests only; it must never be mistaken for Ironic's contract.
// The end-to-end tests (e2e/ironic_test.go) run the real service.
package fakeironic
