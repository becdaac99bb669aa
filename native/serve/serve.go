// Package serve is the HTTP server of `caskg serve`: the browser playground, the WebAssembly
// module and the JS module it runs on, the served artifact, and the retrieval API of package
// wasm/api — the edge worker's, the same code answering the same bytes.
//
// # Routes
//
//	GET  /                      the playground: index.html and its files
//	GET  /caskg.js, /caskg.d.ts the ES module over the WebAssembly module (wasm/js)
//	GET  /caskg.wasm            the WASI reactor (make wasm builds it)
//	GET  /artifact.skg          the served artifact, the playground's default
//	GET  /tasks.json            sample tasks for the artifact, [{"id", "query", "gold"}] ([] without --tasks)
//	api.Prefix and below        the API: its routes, limits, CORS and errors are package api's
//
// # Files
//
// The page, the JS module and the module are embedded in the binary (assets/, which `make
// build` fills; see assets/README.md), so caskg serve needs nothing beside the artifact. Each
// may come from a folder or file instead (Options.Playground, JS, WASM; caskg serve --root for a
// checkout): such live files are read at each request (a rebuilt module or an edited page shows
// on reload). Files are sent gzip-compressed to clients that accept it; the compressed copy is
// kept while the file's size and modification time stay the same. A static file answers GET and
// HEAD only, without CORS headers; a missing one is a 404 with {"error": "serve: …"}.
//
// # CORS
//
// The API answers the origins of Options.Origins, by default any (Access-Control-Allow-Origin:
// *, and the OPTIONS preflight): it reads the artifact and the server listens on 127.0.0.1
// unless told otherwise, so a local page such as a notebook may query the served artifact
// (package api explains why that is safe). With Options.Feedback, those origins may also post
// feedback (application/json only, so never from a plain form of another origin).
//
// # Feedback
//
// With Options.Feedback, POST /v1/feedback hands the reports the API validated against the live
// artifact to that store; caskg serve --feedback FILE gives a FeedbackLog (feedback.go), which
// appends them as trace lines for caskg build --traces. Without it the route answers 501.
//
// # Reloading
//
// With Options.Reload the artifact is replaced when its file changes: a request looks, at most
// once a second, whether a check is due and starts it in the background; the check compares the
// file's size and modification time with the live artifact's and, when they differ, reads and
// decodes the file off the request path and swaps one pointer to the new artifact, its API and
// its tasks. A request loads that pointer once, so it is answered wholly from the old artifact
// or wholly from the new. A file that does not decode (or lacks a task's gold skill) leaves the
// old artifact live, and Options.Logf says why, once per version of the file. Replace the file
// by renaming a finished one over it (caskg build does): a file rewritten in place may be read
// half-written, which fails to decode and is retried when it changes again.
//
// For a Go program: New gives caskg serve's http.Handler for an artifact file, to mount in a
// server of one's own (wasm/api alone is the API without the playground and reloading).
package serve

import (
	"bytes"
	"compress/gzip"
	"embed"
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
	"sync/atomic"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// APIPrefix is where the server mounts the API (api.Prefix): what its callers print and post to.
const APIPrefix = api.Prefix

// assets holds what `make build` copies in: playground/ (the page), js/ (caskg.js and
// caskg.d.ts) and caskg.wasm. A checkout holds only its README, so the package always compiles.
//
//go:embed assets
var assets embed.FS

// embedded is assets; a test stands in a binary built without them.
var embedded fs.FS = assets

// Where in assets the files are, and what the error for a binary built without them says.
const (
	embeddedPlayground = "assets/playground"
	embeddedJS         = "assets/js"
	embeddedWASM       = "assets/caskg.wasm"
	buildHint          = "this caskg binary was built without it: run 'make build' in the caskg repository " +
		"(it builds the module and copies the files into native/serve/assets before compiling), or serve a checkout's files with --root DIR"
)

// Options says what to serve. Artifact is required; Playground, JS and WASM are empty for the
// copies embedded in the binary; Tasks is optional.
type Options struct {
	Artifact   string   // the .skg file, served at /artifact.skg and answered by the API
	Playground string   // folder with index.html, app.js, graph.js, style.css; "": embedded
	JS         string   // folder with caskg.js and caskg.d.ts; "": embedded
	WASM       string   // the module built by make wasm; "": embedded
	Tasks      string   // JSONL tasks {"id", "query", "gold"} for the artifact, offered by the page
	Version    string   // caskg's version, reported by the API's health route
	Origins    []string // the origins the API answers (api.Options.Origins); nil: any
	// Reload replaces the artifact when its file changes (see the package comment), and makes
	// /v1/health name the live file's path and modification time.
	Reload bool
	Logf   func(format string, args ...any) // reload news; nil: none
	// Feedback keeps the reports of POST /v1/feedback (api.Options.Feedback), such as a
	// FeedbackLog; nil answers that route with 501. The caller closes it after the server.
	Feedback service.FeedbackStore
	// Reporters decide who may post feedback (api.Options.Reporters); the zero value takes none.
	Reporters service.FeedbackAuth
}

// reloadEvery is the least time between two looks at the artifact's file.
var reloadEvery = time.Second

// Server answers the routes above. It is safe for concurrent use.
type Server struct {
	opts Options
	live atomic.Pointer[artifact] // what requests are answered from

	play, js, wasm source
	wasmName       string // the module's name in s.wasm
	closers        []io.Closer

	checked   atomic.Int64 // UnixNano of the last look at the artifact's file
	reloading atomic.Bool  // a look is under way
	wg        sync.WaitGroup
	refused   fileStamp // the last file version that failed, so it is not decoded again
	lastErr   string    // the last reload error logged
	// stale is why the live artifact is not the file's (a refused reload), for /v1/health;
	// nil when it is.
	stale atomic.Pointer[string]

	mu  sync.Mutex
	gzs map[string]*gzEntry // compressed static files by source and path
}

// artifact is one version of the served artifact and everything derived from it.
type artifact struct {
	stamp  fileStamp
	data   []byte // the artifact; the graph reads it in place
	dataGz []byte // the artifact compressed, nil if that saves little
	api    *api.Handler
	tasks  []byte // /tasks.json, nil without tasks
}

// fileStamp tells versions of a file apart without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(fi fs.FileInfo) fileStamp { return fileStamp{fi.Size(), fi.ModTime()} }

func (a fileStamp) same(b fileStamp) bool { return a.size == b.size && a.modTime.Equal(b.modTime) }

// source is a file system static files are read from; key tells sources apart in the cache.
type source struct {
	fsys fs.FS
	key  string
}

// New loads the artifact and the tasks and checks that the other files are there, so a
// missing build step shows at start, not as a broken page.
func New(opts Options) (*Server, error) {
	s := &Server{opts: opts, gzs: map[string]*gzEntry{}}
	a, err := s.load()
	if err != nil {
		return nil, err
	}
	s.live.Store(a)
	s.checked.Store(time.Now().UnixNano())
	var wasmName string
	for _, f := range []struct {
		src            *source
		live, embedded string
		name, what     string
		hint           string
	}{
		{&s.play, opts.Playground, embeddedPlayground, "index.html", "playground", "give the folder with --playground"},
		{&s.js, opts.JS, embeddedJS, "caskg.js", "JS module", "give the folder of caskg.js with --js"},
		{&s.wasm, opts.WASM, embeddedWASM, "", "WebAssembly module", "run 'make wasm' or give the module with --wasm"},
	} {
		switch {
		case f.live == "":
			dir, name := f.embedded, f.name
			if name == "" { // the module is a file, not a folder
				dir, name = path.Dir(f.embedded), path.Base(f.embedded)
				wasmName = name
			}
			sub, _ := fs.Sub(embedded, dir) // a valid path: no error
			*f.src = source{sub, "embed:" + dir}
			if fi, err := fs.Stat(sub, name); err != nil || !fi.Mode().IsRegular() {
				s.Close()
				return nil, fmt.Errorf("serve: the %s (native/serve/%s) is not embedded: %s", f.what, path.Join(dir, name), buildHint)
			}
		case f.name == "": // the module: any file, through symlinks too
			dir := filepath.Dir(f.live)
			wasmName = filepath.Base(f.live)
			*f.src = source{os.DirFS(dir), dir}
			if fi, err := os.Stat(f.live); err != nil || !fi.Mode().IsRegular() {
				s.Close()
				return nil, fmt.Errorf("serve: %s: %s not found; %s", f.live, f.what, f.hint)
			}
		default:
			if fi, err := os.Stat(filepath.Join(f.live, f.name)); err != nil || !fi.Mode().IsRegular() {
				s.Close()
				return nil, fmt.Errorf("serve: %s: %s not found; %s", filepath.Join(f.live, f.name), f.what, f.hint)
			}
			// os.Root refuses .. and symlinks that leave the folder.
			root, err := os.OpenRoot(f.live)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("serve: %s: %w", f.what, err)
			}
			s.closers = append(s.closers, root)
			*f.src = source{root.FS(), f.live}
		}
	}
	s.wasmName = wasmName
	// Compress the module now (about half a second for 2.4 MB), not in the first visitor's wait.
	if _, err := s.cached(s.wasm, wasmName); err != nil {
		s.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	return s, nil
}

// load reads, decodes and checks the artifact file and the tasks for it. The stamp is the open
// file's, so it belongs to the bytes read even when the path is renamed over meanwhile.
func (s *Server) load() (*artifact, error) {
	path := s.opts.Artifact
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("serve: artifact: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("serve: artifact: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("serve: artifact: %w", err)
	}
	a := &artifact{stamp: stampOf(fi), data: data}
	ao := api.Options{Version: s.opts.Version, Origins: s.opts.Origins, Feedback: s.opts.Feedback, Reporters: s.opts.Reporters,
		Closest: func(eng *engine.Engine) func(string) []string { return service.NewNames(eng).Closest }}
	if s.opts.Reload {
		ao.Stale = func() string {
			if p := s.stale.Load(); p != nil {
				return *p
			}
			return ""
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		ao.Source = &api.Source{Path: abs, Modified: fi.ModTime()}
	}
	if a.api, err = api.New(data, ao); err != nil {
		if errors.Is(err, graphs.ErrNotArtifact) {
			return nil, fmt.Errorf("serve: %s: not a caskg artifact (.skg); build one with 'caskg build'", path)
		}
		return nil, fmt.Errorf("serve: %s: %w", path, err)
	}
	if s.opts.Tasks != "" {
		tasks, err := eval.ReadTasks(s.opts.Tasks, false)
		if err != nil {
			// A file that cannot be opened is named by its own error; eval's prefix would
			// stutter ("serve: tasks: eval: open …").
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe
			}
			return nil, fmt.Errorf("serve: tasks: %w", err)
		}
		if a.tasks, err = tasksJSON(tasks, a.api.Engine().Graph()); err != nil {
			return nil, fmt.Errorf("serve: tasks: %s: %w", s.opts.Tasks, err)
		}
	}
	a.dataGz = gzipBytes(data)
	return a, nil
}

// poll starts a look at the artifact's file when reloading is on, none is under way and the
// last was reloadEvery ago. It costs a request two atomic loads most of the time.
func (s *Server) poll() {
	if !s.opts.Reload {
		return
	}
	now, last := time.Now().UnixNano(), s.checked.Load()
	if now-last < int64(reloadEvery) || !s.checked.CompareAndSwap(last, now) || !s.reloading.CompareAndSwap(false, true) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.reloading.Store(false)
		s.reload()
	}()
}

// reload swaps in the artifact file when it changed and decodes; otherwise the live one stays.
// One runs at a time (poll's reloading flag), so refused and lastErr need no lock.
func (s *Server) reload() {
	logf := s.opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	fi, err := os.Stat(s.opts.Artifact)
	if err != nil {
		if msg := err.Error(); msg != s.lastErr {
			s.lastErr = msg
			s.stale.Store(&msg)
			logf("%s: keeping the live artifact: %v", s.opts.Artifact, err)
		}
		return
	}
	st := stampOf(fi)
	if st.same(s.live.Load().stamp) {
		s.stale.Store(nil) // the file is the live one again
		return
	}
	if st.same(s.refused) {
		return
	}
	a, err := s.load()
	if err != nil {
		s.refused = st
		s.lastErr = err.Error()
		msg := "the file changed and does not load; serving the artifact before it: " + s.lastErr
		s.stale.Store(&msg)
		logf("%s changed; keeping the live artifact: %v", s.opts.Artifact, err)
		return
	}
	s.live.Store(a)
	s.stale.Store(nil)
	s.lastErr = ""
	g := a.api.Engine().Graph()
	logf("reloaded %s (%d skills, %d edges, %d bytes)", s.opts.Artifact, g.NumSkills(), g.NumEdges(), len(a.data))
}

// Close waits for a reload under way and releases the folders the server reads from.
func (s *Server) Close() error {
	s.wg.Wait()
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Engine is the engine over the live artifact.
func (s *Server) Engine() *engine.Engine { return s.live.Load().api.Engine() }

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

// fail answers with status and the API's {"error": "serve: …"} body.
func fail(w http.ResponseWriter, status int, format string, a ...any) {
	api.WriteError(w, status, "serve: "+fmt.Sprintf(format, a...))
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			fail(w, http.StatusInternalServerError, "internal error: %v", p)
		}
	}()
	s.poll()
	a := s.live.Load() // the one artifact this request sees
	p := r.URL.Path
	if strings.HasPrefix(p, api.Prefix) {
		a.api.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		fail(w, http.StatusMethodNotAllowed, "%s %s: allowed are GET and HEAD", r.Method, p)
		return
	}
	switch p {
	case "/caskg.wasm":
		s.serveFile(w, r, s.wasm, s.wasmName)
	case "/caskg.js", "/caskg.d.ts":
		s.serveFile(w, r, s.js, p[1:])
	case "/artifact.skg":
		// The page shows the file's own name.
		w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": filepath.Base(s.opts.Artifact)}))
		if a.dataGz != nil && acceptsGzip(r) {
			serveBytes(w, r, "artifact.skg", a.dataGz, "gzip")
		} else {
			serveBytes(w, r, "artifact.skg", a.data, "")
		}
	case "/tasks.json":
		if a.tasks == nil {
			// No sample tasks for this artifact (caskg serve --tasks FILE offers some): an empty
			// list, not a 404, so the page has nothing to offer and nothing to report.
			serveBytes(w, r, "tasks.json", []byte("[]\n"), "")
			return
		}
		serveBytes(w, r, "tasks.json", a.tasks, "")
	default:
		name := strings.TrimPrefix(p, "/")
		if name == "" {
			name = "index.html"
		}
		// Only the page's own files: no folders, no hidden files, no way out of the folder
		// (os.Root refuses .. and symlinks that leave it).
		if strings.Contains(name, "/") || strings.HasPrefix(name, ".") || !staticType(name) {
			fail(w, http.StatusNotFound, "no file %q", p)
			return
		}
		s.serveFile(w, r, s.play, name)
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

// cached returns the file name of src, raw and compressed; it reads and compresses the file
// again when its size or time changed (an embedded file never changes). A folder or other
// non-regular file does not exist for it.
func (s *Server) cached(src source, name string) (*gzEntry, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	f, err := src.fsys.Open(name)
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
	key := src.key + "\x00" + name
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

// serveFile sends the file name of src.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, src source, name string) {
	e, err := s.cached(src, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fail(w, http.StatusNotFound, "no file %q", r.URL.Path)
			return
		}
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	body, enc := e.raw, ""
	if e.gz != nil && acceptsGzip(r) {
		body, enc = e.gz, "gzip"
	}
	serveBytes(w, r, path.Base(name), body, enc)
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
