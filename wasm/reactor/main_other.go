//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// main explains how to build the reactor; natively the package only compiles, for vet and tests.
func main() {
	fmt.Fprintln(os.Stderr, "caskg reactor: build it as WebAssembly: make wasm "+
		"(GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared ./wasm/reactor)")
	os.Exit(2)
}
