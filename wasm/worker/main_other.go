//go:build !(js && wasm)

package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/caskg/caskg/wasm/api"
)

// main explains how to build the worker; natively the package only compiles, for vet and tests.
func main() {
	fmt.Fprintln(os.Stderr, "caskg worker: build it for Cloudflare Workers: make worker "+
		"(GOOS=js GOARCH=wasm go build ./wasm/worker), then make worker-dev to serve it with workerd")
	os.Exit(2)
}

// ServeHTTP serves the worker's handler under Go's net/http, for the tests that hold it to
// caskg serve's answers natively.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api.WriteResponse(w, s.Serve(api.FromHTTP(r)))
}
