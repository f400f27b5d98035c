//go:build cgo

package main

// #include <stdlib.h>
import "C"

// touchC calls into C, so that a cgo build is dynamically linked.
func touchC() { _ = C.abs(1) }
