//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains how to build the worker; natively the package only compiles, for vet and tests.
func main() {
	fmt.Fprintln(os.Stderr, "caskg worker: build it for Cloudflare Workers: make worker "+
		"(GOOS=js GOARCH=wasm go build ./wasm/worker), then make worker-dev to serve it with workerd")
	os.Exit(2)
}
