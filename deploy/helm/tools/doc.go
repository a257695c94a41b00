// Package tools checks deploy/helm/rpengine as make test runs it: helm lint
// and helm template (helm v4, in process, from its Go module), every
// rendered object decoded strictly into its Kubernetes API type (unknown
// fields refused), and the rendered probes called on a running daemon.
//
// It is a module of its own so that helm and the Kubernetes API types stay
// out of the engine's go.mod; it must never be imported by the engine.
package tools
