// Command worker is caskg's edge worker: the retrieval API of package wasm/api as a Cloudflare
// Worker, in Go on github.com/syumai/workers (GOOS=js GOARCH=wasm), with the artifact shipped
// beside it as a data module. It is a transport adapter only: routes, limits, CORS and JSON are
// the API package's, so the worker answers every request with the bytes `caskg serve` answers,
// except where the hosts differ by design: POST /v1/feedback writes to a Workers KV namespace
// bound as CASKG_FEEDBACK (feedback.go), and without one answers 501 naming that binding; and
// it takes reports only with a bearer token of the secret CASKG_FEEDBACK_TOKENS, since a worker
// is always reached beyond loopback.
//
// The worker's JS entry (entry.mjs) starts the Go program once per isolate and passes it every
// request, so the Go runtime's start and the artifact's decoding are paid once, not per request.
package main

import (
	"errors"
	"net/http"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// newServer decodes the artifact data and returns the API over it, keeping feedback in store
// from the reporters tokens names (nil: none, and then no report is taken); with a nil store
// POST /v1/feedback answers 501 naming the binding that turns it on.
func newServer(data []byte, store api.FeedbackStore, tokens *api.Tokens) (*server, error) {
	h, err := api.New(data, api.Options{Version: engine.Version, Feedback: store, Reporters: api.FeedbackAuth{Tokens: tokens}})
	if err != nil {
		return nil, errors.New("worker: artifact: " + err.Error())
	}
	return &server{api: h, feedback: store != nil}, nil
}

// server is the worker's handler: the API, and the worker's own 501 for feedback without a store.
// It is a concrete type so that handing it to syumai/workers, which falls back to
// http.DefaultServeMux for a nil handler, provably never does: the ServeMux (40 KB of the
// module) is then left out of the build.
type server struct {
	api      *api.Handler
	feedback bool // a store is configured
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.feedback && r.Method == http.MethodPost && r.URL.EscapedPath() == api.Prefix+"feedback" {
		// The API's headers for a worker: any origin (api.Options' zero value).
		w.Header().Set("Access-Control-Allow-Origin", "*")
		api.WriteError(w, http.StatusNotImplemented, feedbackOff)
		return
	}
	s.api.ServeHTTP(w, r)
}
