// Package api is caskg's retrieval API over HTTP, the one implementation of its routes: `caskg
// serve` (native/serve) mounts it beside the playground, and the edge worker (wasm/worker) hands
// it every request of a Cloudflare isolate, so both answer a request with the same status,
// headers and bytes. The hosts adapt transport only: where the artifact comes from, listening,
// static files. It builds for js/wasm and natively; the WASI reactor does not link it (it would
// bring net/http).
//
// # Routes
//
//	GET  /v1/retrieve?q=…&k=…[&no_graph=1][&render=1]   ranked skills for the task text q
//	     [&min_score=…]                                  only results whose match is at least it (engine.Request.MinScore)
//	     [&allow=…][&deny=…][&namespaces=…]              narrowed by a filter (engine.Filter): comma lists, or repeated
//	POST /v1/retrieve                                    the same for engine.Request as JSON
//	GET  /v1/skills/{name}                               one skill: description, source, body head, edges
//	GET  /v1/health                                      versions, the artifact's size and checksum (and file, Options.Source)
//	POST /v1/feedback                                    {"query", "used", "outcome"}: skills an agent used, for Options.Feedback
//	OPTIONS on any of them                               the CORS preflight
//
// A retrieve answer is the bytes `caskg query --json` prints (the JSON code is
// wasm/internal/wire's, shared with the WASI reactor). Every answer is JSON, sent with its
// length and Cache-Control: no-store. A bad request is {"error": "…"} naming the parameter or
// field, in the words of the package that refused it ("api: …", "service: field …", "engine: …"): 400 for a bad parameter, bad JSON, an unknown field or a value over the limits
// (wasm/service's table), 413 for a body over service.MaxBodyBytes, 404 for an unknown route or skill (with the
// closest names, Options.Closest), 405 (with
// Allow) for a method the route does not take; a bug is a 500, never the end of the program.
// Feedback is validated here (service.CheckFeedback) and kept by the host's FeedbackStore: without one
// the route answers 501 (the edge worker answers its own 501 naming its KV binding), a body not sent as application/json is
// a 415, and a store's refusal for load is a 429 with Retry-After.
// Query parameters are read in sorted order, so a request with two bad ones always names the
// same one.
//
// # CORS
//
// By default every answer carries Access-Control-Allow-Origin: *, and OPTIONS on a route answers
// the preflight, so a page of any origin may call the API. That is deliberate on both hosts: the
// API takes no credentials and sets no cookies, and what it tells is the served
// artifact's skills. For `caskg serve`, which listens on 127.0.0.1 by default, it means a page
// open in the user's browser (a notebook, an agent's UI) can query the local artifact too.
// Options.Origins narrows that to a list of origins (caskg serve --cors-origins): an allowed
// Origin is echoed with Vary: Origin, any other request gets no Access-Control-Allow-Origin, so
// the browser withholds the answer from the page. Status and body never depend on the origin.
// The one route that writes, feedback, only appends to a log the host keeps (off unless the
// host configures it) and never changes what the API answers. It takes only Content-Type:
// application/json (else 415), which no HTML form can send: a page of another origin can post
// feedback only after a preflight, so only an origin the API answers can write. With the
// default (any origin) that is any page in the user's browser; a host that keeps feedback and
// cares who writes it narrows Options.Origins.
//
// For a Go program: New gives an http.Handler answering the /v1 routes for an artifact's bytes,
// to mount in a server of one's own (native/serve is one with the playground and reloading).
package api

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/internal/wire"
	"github.com/caskg/caskg/wasm/service"
)

// Prefix starts the path of every route; a host passes the API the requests under it.
const Prefix = "/v1/"

// The routes, and the methods each takes.
const (
	routeRetrieve = Prefix + "retrieve"
	routeHealth   = Prefix + "health"
	routeSkills   = Prefix + "skills/"
	routeFeedback = Prefix + "feedback"

	methodsRetrieve = "GET, POST, OPTIONS"
	methodsRead     = "GET, OPTIONS"
	methodsWrite    = "POST, OPTIONS"

	routeList = "GET " + routeRetrieve + "?q=…&k=…, POST " + routeRetrieve + ", GET " + routeSkills + "{name}, GET " + routeHealth + " and POST " + routeFeedback
)

// Options configure a Handler. The zero value is the edge worker's: any origin, no source.
type Options struct {
	Version string // caskg's version, reported by the health route

	// Origins are the origins a browser lets call the API: nil is any ("*"); otherwise the
	// exact origins listed ("https://a.example"), "*" among them meaning any; an empty non-nil
	// list allows none but the page's own origin, which needs no CORS.
	Origins []string

	// Source, when not nil, names in the health body the file the artifact was read from, for
	// a host that may replace the artifact while it runs (caskg serve).
	Source *Source
	// Stale, when not nil, says why the host still serves this artifact though its file has
	// changed (a reload refused a file that does not decode), or "" when it does not: the
	// health route then answers "status":"stale" with the reason as "stale", not "ok".
	Stale func() string

	// Feedback keeps the reports POST /v1/feedback accepts; nil answers that route with 501.
	Feedback service.FeedbackStore
	// Reporters decide who may post feedback and name each report's source (reporters.go);
	// the zero value takes none, as fits a host reached beyond loopback without tokens.
	Reporters service.FeedbackAuth

	// Closest, when not nil, makes from the Handler's engine the finder of the names the 404
	// of GET /v1/skills/{name} suggests; nil suggests none. The hosts pass service's
	// (service.NewNames(eng).Closest), the one the MCP tools suggest with (transpositions
	// included: "xlxs" finds xlsx).
	Closest func(eng *engine.Engine) func(name string) []string
}

// Source is where a host read its artifact: the health route reports it as "path" and
// "modified" (RFC 3339, UTC, nanoseconds) in its "artifact" object.
type Source struct {
	Path     string
	Modified time.Time
}

// Handler answers the routes for one artifact. It is read-only after New, so concurrent
// requests share it (a FeedbackStore must allow concurrent Appends).
type Handler struct {
	eng       *engine.Engine
	byName    map[string]int
	health    []byte                // the health body, fixed for the artifact
	stale     func() string         // Options.Stale
	origins   map[string]bool       // the origins allowed; nil: any, Access-Control-Allow-Origin: *
	store     service.FeedbackStore // nil: feedback is off
	reporters service.FeedbackAuth
	closest   func(name string) []string // nil: a 404 for a skill suggests nothing
}

// New decodes the artifact data, which the graph then reads in place, and indexes its skill
// names. A bad artifact gives graphs.Decode's error as it is, for the host to put in context.
func New(data []byte, opt Options) (*Handler, error) {
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, err
	}
	h := &Handler{eng: engine.New(g), byName: make(map[string]int, g.NumSkills()), store: opt.Feedback,
		reporters: opt.Reporters}
	for i := range g.NumSkills() {
		h.byName[g.Name(i)] = i
	}
	if opt.Origins != nil && !slices.Contains(opt.Origins, "*") {
		h.origins = make(map[string]bool, len(opt.Origins))
		for _, o := range opt.Origins {
			h.origins[o] = true
		}
	}
	h.health, h.stale = healthJSON(g, data, opt.Version, opt.Source), opt.Stale
	if opt.Closest != nil {
		h.closest = opt.Closest(h.eng)
	}
	return h, nil
}

// Engine is the engine over the artifact.
func (h *Handler) Engine() *engine.Engine { return h.eng }

// httpError is an answer other than 200, with the message of its {"error": …} body.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, msg string) *httpError { return &httpError{status, "api: " + msg} }

// Serve answers one request. It never panics: a bug answers 500, and must not end the Go
// program that serves a worker isolate.
func (h *Handler) Serve(r *service.Request) (resp *service.Response) {
	resp = &service.Response{}
	if h.origins == nil {
		resp.Set("Access-Control-Allow-Origin", "*")
	} else {
		// The answer depends on the Origin header: a cache must not hand one origin's to another.
		resp.Add("Vary", "Origin")
		if o := r.HeaderValue("Origin"); o != "" && h.origins[o] {
			resp.Set("Access-Control-Allow-Origin", o)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			resp.SetJSON(statusInternalServerError, service.ErrorBody("api: internal error: "+errtext.Recovered(p)))
		}
	}()
	body, err := h.route(resp, r)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{statusBadRequest, err.Error()}
		}
		resp.SetJSON(he.status, service.ErrorBody(he.msg))
		return resp
	}
	if body != nil {
		resp.SetJSON(statusOK, body)
	}
	return resp
}

// route answers r: a JSON body for a 200, nil when it wrote the answer itself (a preflight).
func (h *Handler) route(w *service.Response, r *service.Request) ([]byte, error) {
	path := r.Path
	var methods string
	switch {
	case path == routeRetrieve:
		methods = methodsRetrieve
	case path == routeFeedback:
		methods = methodsWrite
	case path == routeHealth, strings.HasPrefix(path, routeSkills) && len(path) > len(routeSkills):
		methods = methodsRead
	default:
		return nil, fail(statusNotFound, "no route "+strconv.Quote(path)+"; the routes are "+routeList)
	}
	if r.Method == "OPTIONS" {
		w.Set("Access-Control-Allow-Methods", methods)
		w.Set("Access-Control-Allow-Headers", "Content-Type")
		if path == routeFeedback {
			w.Set("Access-Control-Allow-Headers", "Authorization, Content-Type") // a reporter's token
		}
		w.Set("Access-Control-Max-Age", "86400")
		w.Status = statusNoContent
		return nil, nil
	}
	if !slices.Contains(strings.Split(methods, ", "), r.Method) {
		w.Set("Allow", methods)
		return nil, fail(statusMethodNotAllowed, r.Method+" "+path+": allowed are "+methods)
	}
	switch {
	case path == routeHealth:
		if h.stale != nil {
			if why := h.stale(); why != "" {
				b := jsontext.AppendString([]byte(`{"status":"stale","stale":`), why)
				return append(b, h.health[len(`{"status":"ok"`):]...), nil
			}
		}
		return h.health, nil
	case path == routeFeedback:
		return h.feedback(w, r)
	case path == routeRetrieve && r.Method == "POST":
		req, err := readBody(r)
		if err != nil {
			return nil, err
		}
		return h.retrieve(req)
	case path == routeRetrieve:
		req, err := readQuery(r.RawQuery)
		if err != nil {
			return nil, err
		}
		return h.retrieve(req)
	default:
		name, err := unescape(strings.TrimPrefix(path, routeSkills), false)
		if err != nil {
			return nil, fail(statusBadRequest, "skill name: "+err.Error())
		}
		return h.skill(name)
	}
}

// readBody reads engine.Request JSON from at most MaxBodyBytes of body: every field the request
// declares and nothing else, one JSON value, within the limits.
func readBody(r *service.Request) (engine.Request, error) {
	b, err := readBytes(r, `{"query": "heat an egg", "k": 8}`)
	if err != nil {
		return engine.Request{}, err
	}
	req, err := wire.DecodeRequest(b)
	if err != nil {
		return req, fail(statusBadRequest, "body: "+err.Error())
	}
	return req, service.Service.Check(req)
}

// readBytes reads a POST body of at most MaxBodyBytes that is neither blank nor null; example is a body the
// route takes, for the error about a blank one.
func readBytes(r *service.Request, example string) ([]byte, error) {
	if r.ContentLength > service.MaxBodyBytes {
		return nil, fail(statusRequestEntityTooLarge,
			"body is "+strconv.FormatInt(r.ContentLength, 10)+" bytes, at most "+strconv.Itoa(service.MaxBodyBytes))
	}
	var b []byte
	if r.Body != nil {
		var err error
		if b, err = io.ReadAll(io.LimitReader(r.Body, service.MaxBodyBytes+1)); err != nil {
			return nil, fail(statusBadRequest, "reading the body: "+err.Error())
		}
	}
	if len(b) > service.MaxBodyBytes {
		return nil, fail(statusRequestEntityTooLarge, "body is larger than "+strconv.Itoa(service.MaxBodyBytes)+" bytes")
	}
	if i := jsontext.InvalidUTF8(b); i >= 0 {
		// JSON decoders read an invalid byte as U+FFFD, which a query then drops unseen.
		return nil, fail(statusBadRequest, "body: not valid UTF-8 at byte "+strconv.Itoa(i))
	}
	switch string(bytes.TrimSpace(b)) {
	case "":
		return nil, fail(statusBadRequest, "body: want a JSON request such as "+example)
	case "null":
		// The decoders read a null object as empty, which would answer with a complaint about
		// the first field missing rather than about the body.
		return nil, fail(statusBadRequest, "body: null; want a JSON object such as "+example)
	}
	return b, nil
}

// filterLists names a filter's lists as the request's JSON and the GET parameters do.
var filterLists = [...]string{"allow", "deny", "namespaces"}

// readQuery reads the parameters of a GET retrieve: q (required), k, no_graph, render, min_score and the
// filter's allow, deny and namespaces, each a comma-separated list that may also be repeated
// (allow=a*,b*&allow=c*). Any other parameter is an error, as an unknown field of the POST body
// is.
func readQuery(raw string) (engine.Request, error) {
	var req engine.Request
	vals, err := parseQuery(raw)
	if err != nil {
		return req, fail(statusBadRequest, "query string: "+err.Error())
	}
	keys := make([]string, 0, len(vals))
	for key := range vals {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	seen := false
	for _, key := range keys {
		if l := slices.Index(filterLists[:], key); l >= 0 {
			var list []string
			for _, v := range vals[key] {
				list = append(list, strings.Split(v, ",")...)
			}
			switch l {
			case 0:
				req.Filter.Allow = list
			case 1:
				req.Filter.Deny = list
			default:
				req.Filter.Namespaces = list
			}
			if err := service.Service.Check(engine.Request{Filter: req.Filter}); err != nil {
				return req, fail(statusBadRequest, "parameter "+strconv.Quote(key)+": "+strings.TrimPrefix(err.Error(), "service: "))
			}
			continue
		}
		for _, v := range vals[key] {
			if jsontext.InvalidUTF8([]byte(v)) >= 0 {
				return req, fail(statusBadRequest, "parameter "+strconv.Quote(key)+": not valid UTF-8")
			}
		}
		if n := len(vals[key]); n != 1 {
			return req, fail(statusBadRequest, "parameter "+strconv.Quote(key)+" is given "+strconv.Itoa(n)+" times")
		}
		v := vals[key][0]
		switch key {
		case "q":
			if err := service.Service.Check(engine.Request{Query: v}); err != nil {
				return req, fail(statusBadRequest, `parameter "q": `+err.(*service.FieldError).Problem)
			}
			req.Query, seen = v, true
		case "k":
			k, err := strconv.Atoi(v)
			if err != nil {
				return req, fail(statusBadRequest, `parameter "k": `+strconv.Quote(v)+" is not a whole number")
			}
			if err := service.Service.Check(engine.Request{K: k}, key); err != nil {
				return req, fail(statusBadRequest, `parameter "k": `+err.(*service.FieldError).Problem)
			}
			req.K = k
		case "min_score":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x >= 0 && x <= 1) {
				return req, fail(statusBadRequest, `parameter "min_score": `+strconv.Quote(v)+" is not a number in [0, 1]")
			}
			req.MinScore = x
		case "no_graph", "render":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return req, fail(statusBadRequest, "parameter "+strconv.Quote(key)+": "+strconv.Quote(v)+" is not 1, 0, true or false")
			}
			if key == "render" {
				req.Render = b
			} else {
				req.NoGraph = b
			}
		default:
			return req, fail(statusBadRequest, "unknown parameter "+strconv.Quote(key)+"; the parameters are q, k, no_graph, render, min_score, allow, deny and namespaces")
		}
	}
	if !seen {
		return req, fail(statusBadRequest, `parameter "q": missing; GET `+routeRetrieve+"?q=heat+an+egg&k=8")
	}
	return req, nil
}

// retrieve answers req; the engine's own checks (an empty query, other fields) give 400s with
// the engine's message.
func (h *Handler) retrieve(req engine.Request) ([]byte, error) {
	resp, err := h.eng.Query(req)
	if err != nil {
		return nil, &httpError{statusBadRequest, err.Error()}
	}
	b, err := wire.AppendResponse(nil, &resp)
	if err != nil {
		return nil, fail(statusInternalServerError, "response: "+err.Error())
	}
	return b, nil
}

// skill describes the skill called name (a 404 for another, suggesting the closest names when
// the host gave Options.Closest): {"name", "description", "source", "body", "out",
// "in"}, body being the head of its SKILL.md body as the artifact stores it, and out and in its
// published edges ({"name", "type", "state", "weight"}) in the artifact's order. A weight is
// the shortest decimal that reads back as the artifact's float32.
func (h *Handler) skill(name string) ([]byte, error) {
	i, ok := h.byName[name]
	if !ok {
		msg := "no skill named " + strconv.Quote(name)
		// A name longer than any the callers mean is not worth a search.
		if h.closest != nil && len(name) <= maxSuggestBytes {
			if close := h.closest(name); len(close) > 0 {
				msg += "; the closest names are: " + strings.Join(close, ", ")
			}
		}
		return nil, fail(statusNotFound, msg)
	}
	g := h.eng.Graph()
	b := []byte(`{"name":`)
	b = jsontext.AppendString(b, g.Name(i))
	b = append(b, `,"description":`...)
	b = jsontext.AppendString(b, g.Description(i))
	b = append(b, `,"source":`...)
	b = jsontext.AppendString(b, g.Source(i))
	b = append(b, `,"body":`...)
	b = jsontext.AppendString(b, g.Body(i))
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

// maxSuggestBytes bounds the names a 404 of the skill route searches suggestions for: the MCP
// tools' bound of a name argument (mcpcore.MaxNameBytes).
const maxSuggestBytes = 512

func appendEdge(b []byte, g *graphs.Graph, e, other int, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = append(b, `{"name":`...)
	b = jsontext.AppendString(b, g.Name(other))
	b = append(b, `,"type":`...)
	b = jsontext.AppendString(b, g.Type(e).String())
	b = append(b, `,"state":`...)
	b = jsontext.AppendString(b, g.State(e).String())
	b = append(b, `,"weight":`...)
	b, _ = jsontext.AppendFloat(b, float64(g.Weight(e)), 32) // the decoder rejects non-finite weights
	return append(b, '}')
}

// healthJSON is {"status", "version", "go", "artifact": {"format", "checksum", "bytes",
// "skills", "edges", "terms", "vectors"[, "path", "modified"], "learning": {"runs",
// "live_edges", "cold", "note"}}} (learning as engine.LearningOf says); checksum is the artifact
// header's CRC-32C (bytes 12 to 16, graphs/format.go), which names the artifact's contents, and
// path and modified are src's when it is not nil.
func healthJSON(g *graphs.Graph, data []byte, version string, src *Source) []byte {
	maj, mnr := g.Version()
	b := []byte(`{"status":"ok","version":`)
	b = jsontext.AppendString(b, version)
	b = append(b, `,"go":`...)
	// The Go release, without the experiments a build enabled (the edge worker is built with
	// the classic collector, go1.26.8-X:nogreenteagc): both hosts of one release say the same.
	goVersion, _, _ := strings.Cut(runtime.Version(), "-X:")
	b = jsontext.AppendString(b, goVersion)
	b = append(b, `,"artifact":{"format":`...)
	b = jsontext.AppendString(b, strconv.Itoa(maj)+"."+strconv.Itoa(mnr))
	b = append(b, `,"checksum":`...)
	sum := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(data[12:16])), 16)
	b = jsontext.AppendString(b, "crc32c:"+strings.Repeat("0", 8-len(sum))+sum)
	for _, kv := range []struct {
		k string
		v int
	}{{"bytes", g.Size()}, {"skills", g.NumSkills()}, {"edges", g.NumEdges()}, {"terms", g.NumTerms()}, {"vectors", g.VectorDim()}} {
		b = append(b, `,"`+kv.k+`":`...)
		b = strconv.AppendInt(b, int64(kv.v), 10)
	}
	if src != nil {
		b = append(b, `,"path":`...)
		b = jsontext.AppendString(b, src.Path)
		b = append(b, `,"modified":`...)
		b = jsontext.AppendString(b, src.Modified.UTC().Format(time.RFC3339Nano))
	}
	b = append(b, `,"learning":`...)
	b = engine.LearningOf(g).AppendJSON(b)
	return append(b, "}}"...)
}
