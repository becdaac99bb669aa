// Package serve is the HTTP server of `caskg serve`: the browser playground (static files from
// playground/), the WebAssembly module and the JS module it runs on, the served artifact, and the
// retrieval API of the edge worker answered natively by the engine.
//
// # Routes
//
//	GET  /                      the playground: index.html and its files from the playground folder
//	GET  /caskg.js, /caskg.d.ts the ES module over the WebAssembly module (wasm/js)
//	GET  /caskg.wasm            the WASI reactor (make wasm builds it)
//	GET  /artifact.skg          the served artifact, the playground's default
//	GET  /tasks.json            sample tasks for the artifact, [{"id", "query", "gold"}], when given
//	GET  /v1/retrieve?q=…&k=…   ranked skills for the task text q (also no_graph, render)
//	POST /v1/retrieve           the same for a request object, the JSON of `caskg query --json`
//	GET  /v1/skills/{name}      one skill: description, source, body head, published edges
//	GET  /v1/health             versions, the artifact's format, checksum and counts
//
// Static files are read at each request (a rebuilt module or an edited page shows on reload)
// and sent gzip-compressed to clients that accept it; the compressed copy is kept while the
// file's size and modification time stay the same. The API answers JSON only; a bad request is
// a 4xx with {"error": "serve: …"} naming the parameter or field. The limits are those of the
// edge worker: 64 KiB of body, 8 KiB of query text, k ≤ 100.
package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/wasm/engine"
)

// Limits of the API, the edge worker's: the server may face more than its own user.
const (
	MaxBodyBytes  = 64 << 10
	MaxQueryBytes = 8 << 10
	MaxK          = 100
)

// Options says where the served files are. Playground, JS and WASM are required; Tasks is
// optional.
type Options struct {
	Artifact   string // the .skg file, decoded once and served at /artifact.skg
	Playground string // folder with index.html, app.js, graph.js, style.css
	JS         string // folder with caskg.js and caskg.d.ts
	WASM       string // the module built by make wasm
	Tasks      string // JSONL tasks {"id", "query", "gold"} for the artifact, offered by the page
	Version    string // caskg's version, reported by /v1/health
}

// Server answers the routes above. It is safe for concurrent use.
type Server struct {
	opts     Options
	data     []byte // the artifact; the graph reads it in place
	dataGz   []byte // the artifact compressed, nil if that saves little
	eng      *engine.Engine
	byName   map[string]int
	health   []byte
	tasks    []byte // /tasks.json, nil without tasks
	playRoot *os.Root
	jsRoot   *os.Root

	mu  sync.Mutex
	gzs map[string]*gzEntry // compressed static files by path
}

// New loads the artifact and the tasks and checks that the other files are there, so a
// missing build step shows at start, not as a broken page.
func New(opts Options) (*Server, error) {
	data, err := os.ReadFile(opts.Artifact)
	if err != nil {
		return nil, fmt.Errorf("serve: artifact: %w", err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		if errors.Is(err, graphs.ErrNotArtifact) {
			return nil, fmt.Errorf("serve: %s: not a caskg artifact (.skg); build one with 'caskg build'", opts.Artifact)
		}
		return nil, fmt.Errorf("serve: %s: %w", opts.Artifact, err)
	}
	s := &Server{opts: opts, data: data, eng: engine.New(g), byName: make(map[string]int, g.NumSkills()), gzs: map[string]*gzEntry{}}
	for i := range g.NumSkills() {
		s.byName[g.Name(i)] = i
	}
	for _, f := range []struct{ path, what, hint string }{
		{filepath.Join(opts.Playground, "index.html"), "playground", "give the folder with --playground"},
		{filepath.Join(opts.JS, "caskg.js"), "JS module", "give the folder of caskg.js with --js"},
		{opts.WASM, "WebAssembly module", "run 'make wasm' or give the module with --wasm"},
	} {
		if fi, err := os.Stat(f.path); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("serve: %s: %s not found; %s", f.path, f.what, f.hint)
		}
	}
	if s.playRoot, err = os.OpenRoot(opts.Playground); err != nil {
		return nil, fmt.Errorf("serve: playground: %w", err)
	}
	if s.jsRoot, err = os.OpenRoot(opts.JS); err != nil {
		s.playRoot.Close()
		return nil, fmt.Errorf("serve: JS module: %w", err)
	}
	if opts.Tasks != "" {
		tasks, err := eval.ReadTasks(opts.Tasks, false)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("serve: tasks: %w", err)
		}
		s.tasks, err = tasksJSON(tasks, s.byName)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("serve: tasks: %s: %w", opts.Tasks, err)
		}
	}
	s.health = s.healthJSON()
	s.dataGz = gzipBytes(data)
	// Compress the module now (about half a second for 2.4 MB), not in the first visitor's wait.
	if _, err := s.cached(nil, opts.WASM); err != nil {
		s.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	return s, nil
}

// Close releases the folders the server reads from.
func (s *Server) Close() error {
	return errors.Join(s.playRoot.Close(), s.jsRoot.Close())
}

// Engine is the engine over the served artifact.
func (s *Server) Engine() *engine.Engine { return s.eng }

// tasksJSON is the body of /tasks.json. A gold skill the artifact lacks is an error: the page
// would count it as missed by every ranking.
func tasksJSON(tasks []eval.Task, byName map[string]int) ([]byte, error) {
	type task struct {
		ID    string   `json:"id"`
		Query string   `json:"query"`
		Gold  []string `json:"gold"`
	}
	out := make([]task, 0, len(tasks))
	for _, t := range tasks {
		for _, g := range t.Gold {
			if _, ok := byName[g]; !ok {
				return nil, fmt.Errorf("line %d: gold skill %q is not in the artifact", t.Line, g)
			}
		}
		gold := t.Gold
		if gold == nil {
			gold = []string{}
		}
		out = append(out, task{t.ID, t.Query, gold})
	}
	return json.Marshal(out)
}

// httpError is an answer other than 200 with the message of its {"error"} body.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, format string, a ...any) *httpError {
	return &httpError{status, "serve: " + fmt.Sprintf(format, a...)}
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			writeError(w, &httpError{http.StatusInternalServerError, fmt.Sprintf("serve: internal error: %v", p)})
		}
	}()
	p := r.URL.Path
	if strings.HasPrefix(p, "/v1/") {
		body, err := s.api(w, r)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) {
				he = &httpError{http.StatusBadRequest, err.Error()}
			}
			writeError(w, he)
			return
		}
		writeJSON(w, http.StatusOK, body)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, fail(http.StatusMethodNotAllowed, "%s %s: allowed are GET and HEAD", r.Method, p))
		return
	}
	switch p {
	case "/caskg.wasm":
		s.serveFile(w, r, nil, s.opts.WASM)
	case "/caskg.js", "/caskg.d.ts":
		s.serveFile(w, r, s.jsRoot, p[1:])
	case "/artifact.skg":
		// The page shows the file's own name.
		w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": filepath.Base(s.opts.Artifact)}))
		if s.dataGz != nil && acceptsGzip(r) {
			serveBytes(w, r, "artifact.skg", s.dataGz, "gzip")
		} else {
			serveBytes(w, r, "artifact.skg", s.data, "")
		}
	case "/tasks.json":
		if s.tasks == nil {
			writeError(w, fail(http.StatusNotFound, "no tasks are served for this artifact (caskg serve --tasks FILE)"))
			return
		}
		serveBytes(w, r, "tasks.json", s.tasks, "")
	default:
		name := strings.TrimPrefix(p, "/")
		if name == "" {
			name = "index.html"
		}
		// Only the page's own files: no folders, no hidden files, no way out of the folder
		// (os.Root refuses .. and symlinks that leave it).
		if strings.Contains(name, "/") || strings.HasPrefix(name, ".") || !staticType(name) {
			writeError(w, fail(http.StatusNotFound, "no file %q", p))
			return
		}
		s.serveFile(w, r, s.playRoot, name)
	}
}

// staticType reports whether a playground file of this name may be served.
func staticType(name string) bool {
	switch path.Ext(name) {
	case ".html", ".js", ".mjs", ".css", ".svg", ".png", ".ico", ".json", ".txt":
		return true
	}
	return false
}

// gzEntry is a file as last read, raw and compressed.
type gzEntry struct {
	size    int64
	modTime time.Time
	raw, gz []byte
}

// cached returns the file name, from root when it is not nil, else from the file system, raw
// and compressed; it reads and compresses the file again when its size or time changed. A
// folder or other non-regular file does not exist for it.
func (s *Server) cached(root *os.Root, name string) (*gzEntry, error) {
	open := os.Open
	key := name
	if root != nil {
		open = root.Open
		key = root.Name() + "\x00" + name
	}
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	// One filler at a time: concurrent first requests for the module compress it once.
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.gzs[key]; e != nil && e.size == fi.Size() && e.modTime.Equal(fi.ModTime()) {
		return e, nil
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := &gzEntry{size: fi.Size(), modTime: fi.ModTime(), raw: raw, gz: gzipBytes(raw)}
	s.gzs[key] = e
	return e, nil
}

// serveFile sends the file name, from root when it is not nil, else from the file system.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, root *os.Root, name string) {
	e, err := s.cached(root, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			writeError(w, fail(http.StatusNotFound, "no file %q", r.URL.Path))
			return
		}
		writeError(w, fail(http.StatusInternalServerError, "%v", err))
		return
	}
	body, enc := e.raw, ""
	if e.gz != nil && acceptsGzip(r) {
		body, enc = e.gz, "gzip"
	}
	serveBytes(w, r, path.Base(filepath.ToSlash(name)), body, enc)
}

// gzipBytes compresses b, or returns nil when that would not save a tenth of it.
func gzipBytes(b []byte) []byte {
	if len(b) < 1024 {
		return nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if buf.Len() > len(b)*9/10 {
		return nil
	}
	return buf.Bytes()
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// contentTypes maps the served extensions; .wasm must be application/wasm for streaming
// compilation, and .skg is opaque bytes.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".ts":   "text/plain; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".json": "application/json; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".wasm": "application/wasm",
	".skg":  "application/octet-stream",
}

// serveBytes sends body with validators, so a reload revalidates instead of downloading again.
func serveBytes(w http.ResponseWriter, r *http.Request, name string, body []byte, encoding string) {
	h := w.Header()
	ct := contentTypes[path.Ext(name)]
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	if name == "index.html" {
		// The page runs no code from elsewhere; the module needs WebAssembly compilation.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "+
			"style-src 'self'; img-src 'self' data:; connect-src 'self' https: http:; object-src 'none'; base-uri 'none'")
	}
	tag := etag(body, encoding)
	h.Set("ETag", tag)
	if match := r.Header.Get("If-None-Match"); match != "" && (match == "*" || strings.Contains(match, tag)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// The whole body always: the page asks for no ranges, and a range of gzip bytes helps nobody.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// etag names body by its CRC-32 and length: cheap, and enough to tell versions of one file apart.
func etag(body []byte, encoding string) string {
	sum := crc32.ChecksumIEEE(body)
	t := `"` + strconv.FormatUint(uint64(sum), 16) + "-" + strconv.Itoa(len(body))
	if encoding != "" {
		t += "-" + encoding
	}
	return t + `"`
}

// api answers the /v1/ routes: a JSON body for a 200, or an error.
func (s *Server) api(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	p := r.URL.EscapedPath()
	var allowed string
	switch {
	case p == "/v1/retrieve":
		allowed = "GET, HEAD, POST"
	case p == "/v1/health", strings.HasPrefix(p, "/v1/skills/") && len(p) > len("/v1/skills/"):
		allowed = "GET, HEAD"
	default:
		return nil, fail(http.StatusNotFound, "no route %q; the routes are GET /v1/retrieve?q=…&k=…, POST /v1/retrieve, GET /v1/skills/{name} and GET /v1/health", p)
	}
	if !strings.Contains(allowed, r.Method) || r.Method == "" {
		w.Header().Set("Allow", allowed)
		return nil, fail(http.StatusMethodNotAllowed, "%s %s: allowed are %s", r.Method, p, allowed)
	}
	switch {
	case p == "/v1/health":
		return s.health, nil
	case p == "/v1/retrieve" && r.Method == http.MethodPost:
		req, err := readRequest(r)
		if err != nil {
			return nil, err
		}
		return s.retrieve(req)
	case p == "/v1/retrieve":
		req, err := queryRequest(r.URL.RawQuery)
		if err != nil {
			return nil, err
		}
		return s.retrieve(req)
	default:
		name, err := url.PathUnescape(strings.TrimPrefix(p, "/v1/skills/"))
		if err != nil {
			return nil, fail(http.StatusBadRequest, "skill name: %v", err)
		}
		return s.skill(name)
	}
}

// readRequest decodes engine.Request JSON from at most MaxBodyBytes of body. Unknown fields and
// anything after the object are errors, as in the WebAssembly module.
func readRequest(r *http.Request) (engine.Request, error) {
	var req engine.Request
	if r.ContentLength > MaxBodyBytes {
		return req, fail(http.StatusRequestEntityTooLarge, "body is %d bytes, at most %d", r.ContentLength, MaxBodyBytes)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return req, fail(http.StatusBadRequest, "reading the body: %v", err)
	}
	if len(b) > MaxBodyBytes {
		return req, fail(http.StatusRequestEntityTooLarge, "body is larger than %d bytes", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return req, fail(http.StatusBadRequest, `body: want a JSON request such as {"query": "heat an egg", "k": 8}`)
	}
	req, err = DecodeRequest(b)
	if err != nil {
		return req, &httpError{http.StatusBadRequest, err.Error()}
	}
	return req, nil
}

// DecodeRequest parses the JSON of a retrieval request (engine.Request, the request of `caskg
// query --json` and of the WebAssembly module) and applies the server's limits.
func DecodeRequest(b []byte) (engine.Request, error) {
	var req engine.Request
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return req, fmt.Errorf("serve: body: bad JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return req, fmt.Errorf("serve: body: field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return req, fmt.Errorf("serve: body: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, fmt.Errorf("serve: body: more than one JSON value")
	}
	if len(req.Query) > MaxQueryBytes {
		return req, fmt.Errorf("serve: field \"query\": %d bytes, at most %d", len(req.Query), MaxQueryBytes)
	}
	if req.K < 0 || req.K > MaxK {
		return req, fmt.Errorf("serve: field \"k\": %d is not a whole number in [1, %d]", req.K, MaxK)
	}
	return req, nil
}

// queryRequest reads the parameters of GET /v1/retrieve: q (required), k, no_graph, render.
func queryRequest(raw string) (engine.Request, error) {
	var req engine.Request
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return req, fail(http.StatusBadRequest, "query string: %v", err)
	}
	seen := false
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		if len(vals[key]) != 1 {
			return req, fail(http.StatusBadRequest, "parameter %q is given %d times", key, len(vals[key]))
		}
		v := vals[key][0]
		switch key {
		case "q":
			if len(v) > MaxQueryBytes {
				return req, fail(http.StatusBadRequest, "parameter \"q\": %d bytes, at most %d", len(v), MaxQueryBytes)
			}
			req.Query, seen = v, true
		case "k":
			k, err := strconv.Atoi(v)
			if err != nil || k < 1 || k > MaxK {
				return req, fail(http.StatusBadRequest, "parameter \"k\": %q is not a whole number in [1, %d]", v, MaxK)
			}
			req.K = k
		case "no_graph", "render":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return req, fail(http.StatusBadRequest, "parameter %q: %q is not 1, 0, true or false", key, v)
			}
			if key == "render" {
				req.Render = b
			} else {
				req.NoGraph = b
			}
		default:
			return req, fail(http.StatusBadRequest, "unknown parameter %q; the parameters are q, k, no_graph and render", key)
		}
	}
	if !seen {
		return req, fail(http.StatusBadRequest, `parameter "q": missing; GET /v1/retrieve?q=heat+an+egg&k=8`)
	}
	return req, nil
}

func (s *Server) retrieve(req engine.Request) ([]byte, error) {
	resp, err := s.eng.Query(req)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, err.Error()}
	}
	return json.Marshal(resp)
}

// skill is the body of /v1/skills/{name}, the edge worker's.
func (s *Server) skill(name string) ([]byte, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, fail(http.StatusNotFound, "no skill named %q", name)
	}
	type edge struct {
		Name   string  `json:"name"`
		Type   string  `json:"type"`
		State  string  `json:"state"`
		Weight float64 `json:"weight"`
	}
	g := s.eng.Graph()
	mk := func(e, other int) edge {
		return edge{g.Name(other), g.Type(e).String(), g.State(e).String(), float64(g.Weight(e))}
	}
	out, in := []edge{}, []edge{}
	lo, hi := g.Out(i)
	for e := lo; e < hi; e++ {
		out = append(out, mk(e, g.Target(e)))
	}
	for j := range g.NumSkills() {
		lo, hi := g.Out(j)
		for e := lo; e < hi; e++ {
			if g.Target(e) == i {
				in = append(in, mk(e, j))
			}
		}
	}
	return json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Source      string `json:"source"`
		Body        string `json:"body"`
		Out         []edge `json:"out"`
		In          []edge `json:"in"`
	}{g.Name(i), g.Description(i), g.Source(i), g.Body(i), out, in})
}

func (s *Server) healthJSON() []byte {
	g := s.eng.Graph()
	maj, mnr := g.Version()
	type artifact struct {
		Format   string `json:"format"`
		Checksum string `json:"checksum"`
		Bytes    int    `json:"bytes"`
		Skills   int    `json:"skills"`
		Edges    int    `json:"edges"`
		Terms    int    `json:"terms"`
		Vectors  int    `json:"vectors"`
	}
	b, _ := json.Marshal(struct {
		Status   string   `json:"status"`
		Version  string   `json:"version"`
		Go       string   `json:"go"`
		Artifact artifact `json:"artifact"`
	}{"ok", s.opts.Version, runtime.Version(), artifact{
		Format:   strconv.Itoa(maj) + "." + strconv.Itoa(mnr),
		Checksum: fmt.Sprintf("crc32c:%08x", binary.LittleEndian.Uint32(s.data[12:16])),
		Bytes:    g.Size(), Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms(), Vectors: g.VectorDim(),
	}})
	return b
}

func writeError(w http.ResponseWriter, he *httpError) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		Error string `json:"error"`
	}{he.msg})
	writeJSON(w, he.status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
