// Command worker is caskg's edge worker: the retrieval API of package wasm/api, and MCP at
// /mcp, as a Cloudflare Worker in Go (GOOS=js GOARCH=wasm). It is a transport adapter only:
// routes, limits, CORS and JSON are the API package's, so the worker answers every request with
// the bytes `caskg serve` answers, except where the hosts differ by design: POST /v1/feedback
// writes to a Workers KV namespace bound as CASKG_FEEDBACK (feedback.go), and without one
// answers 501 naming that binding; and it takes reports only with a bearer token of the secret
// CASKG_FEEDBACK_TOKENS, since a worker is always reached beyond loopback.
//
// The program links none of net/http, which would be most of it: entry.mjs hands each Workers
// Request to the Go function the program binds (main_js.go), as method, path, query, headers
// and body, and makes a Response of the service.Response it gets back. github.com/syumai/workers
// gives Go's JS glue (wasm_exec.js, with its context patch) and the "ready" import. Its HTTP
// handler is built on net/http and its KV client on fmt (125 KB of the gzip bundle), so the
// program calls the KV binding's put through syscall/js itself (main_js.go).
//
// The artifact is a Workers Static Asset by default, read once per isolate through the ASSETS
// binding, and the Go program checks it against the checksum make worker wrote beside entry.mjs
// (artifact.mjs); it may also be embedded as a data module (make worker WORKER_EMBED=1). The
// program starts once per isolate and serves every request of it.
package main

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
)

// mcpPath is where the worker serves MCP (streamable HTTP, stateless, JSON responses).
const mcpPath = "/mcp"

// newServer decodes the artifact data and returns the API over it, keeping feedback in store
// from the reporters tokens names (nil: none, and then no report is taken); with a nil store
// POST /v1/feedback answers 501 naming the binding that turns it on. checksum, when not "",
// is the checksum make worker recorded ("crc32c:…", as the health route names it): an
// artifact with another is refused, so a worker never serves an asset it was not built with.
func newServer(data []byte, checksum string, store service.FeedbackStore, tokens *service.Tokens) (*server, error) {
	opt := api.Options{Version: engine.Version, Feedback: store, Reporters: service.FeedbackAuth{Tokens: tokens},
		Closest: func(eng *engine.Engine) func(string) []string { return service.NewNames(eng).Closest }}
	h, err := api.New(data, opt)
	if err != nil {
		return nil, errors.New("worker: artifact: " + err.Error())
	}
	if got := headerChecksum(data); checksum != "" && got != checksum {
		return nil, errors.New("worker: artifact: checksum " + got + ", but this worker was built for " + checksum +
			": the asset is not the artifact make worker was given; rebuild the worker with it (make worker WORKER_ARTIFACT=…)")
	}
	m := mcpcore.New(h.Engine(), mcpcore.Options{Version: engine.Version, Feedback: store,
		Reporters: opt.Reporters, Artifact: "caskg.skg"})
	return &server{api: h, mcp: m, feedback: store != nil}, nil
}

// headerChecksum is the artifact header's CRC-32C (bytes 12 to 16, graphs/format.go) as the
// health route writes it; data has been decoded, so it is long enough.
func headerChecksum(data []byte) string {
	sum := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(data[12:16])), 16)
	return "crc32c:" + strings.Repeat("0", 8-len(sum)) + sum
}

// server is the worker's handler: the API, MCP at /mcp, and the worker's own 501 for feedback
// without a store.
type server struct {
	api      *api.Handler
	mcp      *mcpcore.Handler
	feedback bool // a store is configured
}

// Serve answers one request.
func (s *server) Serve(r *service.Request) *service.Response {
	switch {
	case r.Path == mcpPath:
		return s.mcp.Serve(r)
	case !s.feedback && r.Method == "POST" && r.Path == api.Prefix+"feedback":
		return service.ErrorResponse(501, feedbackOff)
	}
	return s.api.Serve(r)
}
