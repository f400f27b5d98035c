//go:build !cgo

package main

// touchC: nothing to call without cgo (a static build).
func touchC() {}
