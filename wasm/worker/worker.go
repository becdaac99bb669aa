// Command worker is caskg's edge worker: the retrieval API of package wasm/api as a Cloudflare
// Worker, in Go on github.com/syumai/workers (GOOS=js GOARCH=wasm), with the artifact shipped
// beside it as a data module. It is a transport adapter only: routes, limits, CORS and JSON are
// the API package's, so the worker answers every request with the bytes `caskg serve` answers.
//
// The worker's JS entry (entry.mjs) starts the Go program once per isolate and passes it every
// request, so the Go runtime's start and the artifact's decoding are paid once, not per request.
package main

import (
	"errors"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// newServer decodes the artifact data and returns the API over it.
func newServer(data []byte) (*api.Handler, error) {
	h, err := api.New(data, api.Options{Version: engine.Version})
	if err != nil {
		return nil, errors.New("worker: artifact: " + err.Error())
	}
	return h, nil
}
