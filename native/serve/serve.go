// Package serve is the HTTP server of `caskg serve`: the browser playground (static files from
// playground/), the WebAssembly module and the JS module it runs on, the served artifact, and
// the retrieval API of package wasm/api — the edge worker's, the same code answering the same
// bytes.
//
// # Routes
//
//	GET  /                      the playground: index.html and its files from the playground folder
//	GET  /caskg.js, /caskg.d.ts the ES module over the WebAssembly module (wasm/js)
//	GET  /caskg.wasm            the WASI reactor (make wasm builds it)
//	GET  /artifact.skg          the served artifact, the playground's default
//	GET  /tasks.json            sample tasks for the artifact, [{"id", "query", "gold"}], when given
//	api.Prefix and below        the API: its routes, limits, CORS and errors are package api's
//
// Static files are read at each request (a rebuilt module or an edited page shows on reload)
// and sent gzip-compressed to clients that accept it; the compressed copy is kept while the
// file's size and modification time stay the same. A static file answers GET and HEAD only,
// without CORS headers; a missing one is a 404 with {"error": "serve: …"}. The API answers any
// origin (Access-Control-Allow-Origin: *, and the OPTIONS preflight): it is read-only and the
// server listens on 127.0.0.1 unless told otherwise, so a local page such as a notebook may
// query the served artifact (package api explains why that is safe).
package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// Options says where the served files are. Playground, JS and WASM are required; Tasks is
// optional.
type Options struct {
	Artifact   string // the .skg file, decoded once and served at /artifact.skg
	Playground string // folder with index.html, app.js, graph.js, style.css
	JS         string // folder with caskg.js and caskg.d.ts
	WASM       string // the module built by make wasm
	Tasks      string // JSONL tasks {"id", "query", "gold"} for the artifact, offered by the page
	Version    string // caskg's version, reported by the API's health route
}

// Server answers the routes above. It is safe for concurrent use.
type Server struct {
	opts     Options
	data     []byte // the artifact; the graph reads it in place
	dataGz   []byte // the artifact compressed, nil if that saves little
	api      *api.Handler
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
	h, err := api.New(data, api.Options{Version: opts.Version})
	if err != nil {
		if errors.Is(err, graphs.ErrNotArtifact) {
			return nil, fmt.Errorf("serve: %s: not a caskg artifact (.skg); build one with 'caskg build'", opts.Artifact)
		}
		return nil, fmt.Errorf("serve: %s: %w", opts.Artifact, err)
	}
	s := &Server{opts: opts, data: data, api: h, gzs: map[string]*gzEntry{}}
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
		s.tasks, err = tasksJSON(tasks, h.Engine().Graph())
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("serve: tasks: %s: %w", opts.Tasks, err)
		}
	}
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
func (s *Server) Engine() *engine.Engine { return s.api.Engine() }

// tasksJSON is the body of /tasks.json. A gold skill the artifact lacks is an error: the page
// would count it as missed by every ranking.
func tasksJSON(tasks []eval.Task, g *graphs.Graph) ([]byte, error) {
	names := make(map[string]bool, g.NumSkills())
	for i := range g.NumSkills() {
		names[g.Name(i)] = true
	}
	type task struct {
		ID    string   `json:"id"`
		Query string   `json:"query"`
		Gold  []string `json:"gold"`
	}
	out := make([]task, 0, len(tasks))
	for _, t := range tasks {
		for _, g := range t.Gold {
			if !names[g] {
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
	if strings.HasPrefix(p, api.Prefix) {
		s.api.ServeHTTP(w, r)
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

func writeError(w http.ResponseWriter, he *httpError) { api.WriteError(w, he.status, he.msg) }
