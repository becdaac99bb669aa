// Command worker is caskg's edge worker: the retrieval API as a Cloudflare Worker, in Go on
// github.com/syumai/workers (GOOS=js GOARCH=wasm), with the artifact shipped beside it as a data
// module. It is a thin adapter: routes, limits and JSON around wasm/engine, whose answers are the
// same bytes as `caskg query --json` (the JSON code is wasm/internal/wire's, shared with the WASI
// reactor).
//
// # Routes
//
//	GET  /v1/retrieve?q=…&k=…[&no_graph=1][&render=1]   ranked skills for the task text q
//	POST /v1/retrieve                                    the same for engine.Request as JSON
//	GET  /v1/skills/{name}                               one skill: description, source, body head, edges
//	GET  /v1/health                                      versions and the artifact's size and checksum
//	OPTIONS on any of them                               the CORS preflight
//
// Every answer is JSON and carries Access-Control-Allow-Origin: *. A bad request is a 4xx with
// {"error": "..."} naming the parameter or field; an unknown route is a 404.
//
// The worker's JS entry (entry.mjs) starts the Go program once per isolate and passes it every
// request, so the Go runtime's start and the artifact's decoding are paid once, not per request.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/internal/tinyjson"
	"github.com/caskg/caskg/wasm/internal/wire"
)

// Version of the worker; it matches the caskg command's.
const Version = "0.1.0"

// Limits at the edge, tighter than the engine's own: a worker answers strangers.
const (
	MaxBodyBytes  = 64 << 10 // POST body; a request with a 1,024-dimension vector fits
	MaxQueryBytes = 8 << 10  // task text, in bytes of UTF-8
	MaxK          = 100      // results per request
)

// server answers the API for one decoded artifact. It is read-only after newServer, so
// concurrent requests share it.
type server struct {
	data   []byte // the artifact; the graph reads it in place
	eng    *engine.Engine
	byName map[string]int
	health []byte // the /v1/health body, fixed for the artifact
}

// newServer decodes the artifact data and indexes skill names.
func newServer(data []byte) (*server, error) {
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, errors.New("worker: artifact: " + err.Error())
	}
	s := &server{data: data, eng: engine.New(g), byName: make(map[string]int, g.NumSkills())}
	for i := range g.NumSkills() {
		s.byName[g.Name(i)] = i
	}
	s.health = s.healthJSON()
	return s, nil
}

// httpError is an answer other than 200, with the message for its {"error": ...} body.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, msg string) *httpError { return &httpError{status, "worker: " + msg} }

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	defer func() {
		// A bug must come back as a 500, not end the Go program that serves the isolate.
		if p := recover(); p != nil {
			msg := "unknown panic"
			switch p := p.(type) {
			case error:
				msg = p.Error()
			case string:
				msg = p
			}
			writeJSON(w, http.StatusInternalServerError, errorJSON(errors.New("worker: internal error: "+msg)))
		}
	}()
	body, err := s.route(w, r)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{http.StatusBadRequest, err.Error()}
		}
		writeJSON(w, he.status, errorJSON(he))
		return
	}
	if body != nil {
		writeJSON(w, http.StatusOK, body)
	}
}

// route answers r: a JSON body for a 200, nil when it wrote the answer itself (a preflight).
func (s *server) route(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	path := r.URL.EscapedPath()
	var methods string
	switch {
	case path == "/v1/retrieve":
		methods = "GET, POST, OPTIONS"
	case path == "/v1/health":
		methods = "GET, OPTIONS"
	case strings.HasPrefix(path, "/v1/skills/") && len(path) > len("/v1/skills/"):
		methods = "GET, OPTIONS"
	default:
		return nil, fail(http.StatusNotFound, "no route "+strconv.Quote(path)+
			"; the routes are GET /v1/retrieve?q=…&k=…, POST /v1/retrieve, GET /v1/skills/{name} and GET /v1/health")
	}
	if r.Method == http.MethodOptions {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return nil, nil
	}
	if !slices.Contains(strings.Split(methods, ", "), r.Method) {
		w.Header().Set("Allow", methods)
		return nil, fail(http.StatusMethodNotAllowed, r.Method+" "+path+": allowed are "+methods)
	}
	switch {
	case path == "/v1/health":
		return s.health, nil
	case path == "/v1/retrieve" && r.Method == http.MethodPost:
		req, err := readRequest(r)
		if err != nil {
			return nil, err
		}
		return s.retrieve(req)
	case path == "/v1/retrieve":
		req, err := queryRequest(r.URL.RawQuery)
		if err != nil {
			return nil, err
		}
		return s.retrieve(req)
	default:
		name, err := url.PathUnescape(strings.TrimPrefix(path, "/v1/skills/"))
		if err != nil {
			return nil, fail(http.StatusBadRequest, "skill name: "+err.Error())
		}
		return s.skill(name)
	}
}

// readRequest reads engine.Request JSON from the body, at most MaxBodyBytes of it.
func readRequest(r *http.Request) (engine.Request, error) {
	if r.ContentLength > MaxBodyBytes {
		return engine.Request{}, errBodyTooLarge(r.ContentLength)
	}
	var b []byte
	var err error
	if r.Body != nil {
		b, err = io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		if err != nil {
			return engine.Request{}, fail(http.StatusBadRequest, "reading the body: "+err.Error())
		}
	}
	if len(b) > MaxBodyBytes {
		return engine.Request{}, errBodyTooLarge(-1)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return engine.Request{}, fail(http.StatusBadRequest, `body: want a JSON request such as {"query": "heat an egg", "k": 8}`)
	}
	req, err := wire.DecodeRequest(b)
	if err != nil {
		return req, fail(http.StatusBadRequest, "body: "+err.Error())
	}
	if len(req.Query) > MaxQueryBytes {
		return req, errQueryTooLong("query", len(req.Query))
	}
	if req.K < 0 || req.K > MaxK {
		return req, errK("k", strconv.Itoa(req.K))
	}
	return req, nil
}

func errBodyTooLarge(n int64) error {
	msg := "body is larger than " + strconv.Itoa(MaxBodyBytes) + " bytes"
	if n >= 0 {
		msg = "body is " + strconv.FormatInt(n, 10) + " bytes, at most " + strconv.Itoa(MaxBodyBytes)
	}
	return fail(http.StatusRequestEntityTooLarge, msg)
}

func errQueryTooLong(field string, n int) error {
	return fail(http.StatusBadRequest, "field "+strconv.Quote(field)+": query is "+strconv.Itoa(n)+
		" bytes, at most "+strconv.Itoa(MaxQueryBytes))
}

func errK(field, v string) error {
	return fail(http.StatusBadRequest, "field "+strconv.Quote(field)+": "+strconv.Quote(v)+
		" is not a whole number in [1, "+strconv.Itoa(MaxK)+"]")
}

// queryRequest reads the parameters of GET /v1/retrieve: q (required), k, no_graph, render.
// Any other parameter is an error, as an unknown field of the POST body is.
func queryRequest(raw string) (engine.Request, error) {
	var req engine.Request
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return req, fail(http.StatusBadRequest, "query string: "+err.Error())
	}
	seen := false
	for key, vs := range vals {
		if len(vs) != 1 {
			return req, fail(http.StatusBadRequest, "parameter "+strconv.Quote(key)+" is given "+strconv.Itoa(len(vs))+" times")
		}
		v := vs[0]
		switch key {
		case "q":
			if len(v) > MaxQueryBytes {
				return req, errQueryTooLong("q", len(v))
			}
			req.Query, seen = v, true
		case "k":
			k, err := strconv.Atoi(v)
			if err != nil || k < 1 || k > MaxK {
				return req, errK("k", v)
			}
			req.K = k
		case "no_graph", "render":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return req, fail(http.StatusBadRequest, "parameter "+strconv.Quote(key)+": "+strconv.Quote(v)+" is not 1, 0, true or false")
			}
			if key == "render" {
				req.Render = b
			} else {
				req.NoGraph = b
			}
		default:
			return req, fail(http.StatusBadRequest, "unknown parameter "+strconv.Quote(key)+"; the parameters are q, k, no_graph and render")
		}
	}
	if !seen {
		return req, fail(http.StatusBadRequest, `parameter "q": missing; GET /v1/retrieve?q=heat+an+egg&k=8`)
	}
	return req, nil
}

// retrieve answers req; the engine's own checks (empty query, other fields) give 400s.
func (s *server) retrieve(req engine.Request) ([]byte, error) {
	resp, err := s.eng.Query(req)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, err.Error()}
	}
	b, err := wire.AppendResponse(nil, &resp)
	if err != nil {
		return nil, &httpError{http.StatusInternalServerError, "worker: response: " + err.Error()}
	}
	return b, nil
}

// skill describes the skill called name: {"name", "description", "source", "body", "out",
// "in"}, body being the head of its SKILL.md body as the artifact stores it, and out and in its
// published edges ({"name", "type", "state", "weight"}) in the artifact's order.
func (s *server) skill(name string) ([]byte, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, fail(http.StatusNotFound, "no skill named "+strconv.Quote(name))
	}
	g := s.eng.Graph()
	b := []byte(`{"name":`)
	b = tinyjson.AppendString(b, g.Name(i))
	b = append(b, `,"description":`...)
	b = tinyjson.AppendString(b, g.Description(i))
	b = append(b, `,"source":`...)
	b = tinyjson.AppendString(b, g.Source(i))
	b = append(b, `,"body":`...)
	b = tinyjson.AppendString(b, g.Body(i))
	b = append(b, `,"out":[`...)
	lo, hi := g.Out(i)
	for e := lo; e < hi; e++ {
		b = appendEdge(b, g, e, g.Target(e), e > lo)
	}
	b = append(b, `],"in":[`...)
	n := 0
	for j := range g.NumSkills() {
		lo, hi := g.Out(j)
		for e := lo; e < hi; e++ {
			if g.Target(e) == i {
				b = appendEdge(b, g, e, j, n > 0)
				n++
			}
		}
	}
	return append(b, "]}"...), nil
}

func appendEdge(b []byte, g *graphs.Graph, e, other int, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = append(b, `{"name":`...)
	b = tinyjson.AppendString(b, g.Name(other))
	b = append(b, `,"type":`...)
	b = tinyjson.AppendString(b, g.Type(e).String())
	b = append(b, `,"state":`...)
	b = tinyjson.AppendString(b, g.State(e).String())
	b = append(b, `,"weight":`...)
	b, _ = tinyjson.AppendFloat(b, float64(g.Weight(e)), 32) // the decoder rejects non-finite weights
	return append(b, '}')
}

// healthJSON is {"status", "version", "go", "artifact": {"format", "checksum", "bytes",
// "skills", "edges", "terms", "vectors"}}; checksum is the artifact header's CRC-32C
// (graphs/format.go), which names the artifact's contents.
func (s *server) healthJSON() []byte {
	g := s.eng.Graph()
	maj, mnr := g.Version()
	b := []byte(`{"status":"ok","version":`)
	b = tinyjson.AppendString(b, Version)
	b = append(b, `,"go":`...)
	b = tinyjson.AppendString(b, runtime.Version())
	b = append(b, `,"artifact":{"format":`...)
	b = tinyjson.AppendString(b, strconv.Itoa(maj)+"."+strconv.Itoa(mnr))
	b = append(b, `,"checksum":`...)
	sum := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(s.data[12:16])), 16)
	b = tinyjson.AppendString(b, "crc32c:"+strings.Repeat("0", 8-len(sum))+sum)
	for _, kv := range []struct {
		k string
		v int
	}{{"bytes", g.Size()}, {"skills", g.NumSkills()}, {"edges", g.NumEdges()}, {"terms", g.NumTerms()}, {"vectors", g.VectorDim()}} {
		b = append(b, `,"`+kv.k+`":`...)
		b = strconv.AppendInt(b, int64(kv.v), 10)
	}
	return append(b, "}}"...)
}

func errorJSON(err error) []byte {
	b := append([]byte(`{"error":`), tinyjson.AppendString(nil, err.Error())...)
	return append(b, '}')
}

// writeJSON writes a JSON answer with its length, so the runtime can send it as a fixed-length
// body rather than chunked.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
