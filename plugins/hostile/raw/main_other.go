//go:build !wasip1

package main

// main lets the package build natively (go vet ./...); the plugin itself
// exists only for wasip1.
func main() {}
