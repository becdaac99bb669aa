package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// testFiles writes the sample artifact (as caskg build writes it by default) and a fake module
// into folders of the test's own, and returns the server's options for them, the playground and
// the sample tasks.
func testFiles(tb testing.TB) Options {
	tb.Helper()
	opts := Options{
		Artifact:   testlib.SampleFile(tb),
		Playground: "../../playground",
		JS:         "../../wasm/js",
		WASM:       filepath.Join(tb.TempDir(), "caskg.wasm"),
		Tasks:      "../../graphs/sample-tasks.jsonl",
		Version:    "test",
	}
	// Not a real module: the server only sends the bytes. Compressible, so gzip applies.
	module := append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte{0}, 4096)...)
	if err := os.WriteFile(opts.WASM, module, 0o644); err != nil {
		tb.Fatal(err)
	}
	return opts
}

func newTestServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(testFiles(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func do(s *Server, method, target, body string, header ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// TestAPI holds serve's mounting of package api: requests under api.Prefix get the API's
// answers (wasm/worker's parity test holds them byte for byte to the edge worker's), with CORS;
// the files around it get none.
func TestAPI(t *testing.T) {
	s := newTestServer(t)
	query := func(req engine.Request) string {
		resp, err := s.Engine().Query(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(resp)
		return string(b)
	}
	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string // the whole body, or for an error a part of it
		cors                       bool   // Access-Control-Allow-Origin: * expected
	}{
		{"get", "GET", "/v1/retrieve?q=heat+some+egg&k=4", "", 200, query(engine.Request{Query: "heat some egg", K: 4}), true},
		{"get render", "GET", "/v1/retrieve?q=heat+some+egg&render=true&k=2", "", 200, query(engine.Request{Query: "heat some egg", K: 2, Render: true}), true},
		{"post", "POST", "/v1/retrieve", `{"query": "heat some egg", "k": 3, "gamma": 0.3, "seeds": 2}`, 200, query(engine.Request{Query: "heat some egg", K: 3, Gamma: 0.3, Seeds: 2}), true},
		{"k over the limit", "GET", "/v1/retrieve?q=x&k=101", "", 400, `{"error":"api: parameter \"k\": 101 is outside [1, 100]"}`, true},
		{"big body", "POST", "/v1/retrieve", `{"query": "` + strings.Repeat("a", service.MaxBodyBytes) + `"}`, 413, `at most 65536`, true},
		{"skill", "GET", "/v1/skills/find-object", "", 200, `"name":"find-object","description":"Locate a named household object`, true},
		{"health", "GET", "/v1/health", "", 200, `"status":"ok","version":"test"`, true},
		{"no route", "GET", "/v1/other", "", 404, `{"error":"api: no route \"/v1/other\"`, true},
		{"HEAD", "HEAD", "/v1/health", "", 405, ``, true},
		{"preflight", "OPTIONS", "/v1/retrieve", "", 204, ``, true},
		{"static", "GET", "/style.css", "", 200, `body`, false},
		{"static error", "GET", "/nope.js", "", 404, `{"error":"serve: no file \"/nope.js\""}`, false},
		{"static preflight", "OPTIONS", "/app.js", "", 405, `{"error":"serve: OPTIONS /app.js: allowed are GET and HEAD"}`, false},
		{"prefix without its slash", "GET", "/v1", "", 404, `serve: no file \"/v1\"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, tt.method, tt.target, tt.body)
			got := w.Body.String()
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, got)
			}
			if cors := w.Header().Get("Access-Control-Allow-Origin") == "*"; cors != tt.cors {
				t.Errorf("Access-Control-Allow-Origin %q, want it %v", w.Header().Get("Access-Control-Allow-Origin"), tt.cors)
			}
			if tt.status == 200 && strings.HasPrefix(tt.want, "{") {
				if got != tt.want {
					t.Errorf("body\n%s\nwant\n%s", got, tt.want)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("body %s lacks %s", got, tt.want)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	s := newTestServer(t)
	opts := testFiles(t)
	file := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, target, gzip string
		status             int
		ctype, want        string
	}{
		{"index", "/", "", 200, "text/html; charset=utf-8", file("../../playground/index.html")},
		{"index gzip", "/", "gzip", 200, "text/html; charset=utf-8", file("../../playground/index.html")},
		{"app", "/app.js", "gzip, deflate", 200, "text/javascript; charset=utf-8", file("../../playground/app.js")},
		{"style", "/style.css", "", 200, "text/css; charset=utf-8", file("../../playground/style.css")},
		{"js module", "/caskg.js", "gzip", 200, "text/javascript; charset=utf-8", file("../../wasm/js/caskg.js")},
		{"module", "/caskg.wasm", "gzip", 200, "application/wasm", file(opts.WASM)},
		{"artifact", "/artifact.skg", "", 200, "application/octet-stream", file(opts.Artifact)},
		{"artifact gzip", "/artifact.skg", "gzip", 200, "application/octet-stream", file(opts.Artifact)},
		{"go source", "/doc.go", "", 404, "application/json; charset=utf-8", `no file \"/doc.go\"`},
		{"test source", "/e2e_test.go", "", 404, "application/json; charset=utf-8", `no file`},
		{"up", "/../go.mod", "", 404, "application/json; charset=utf-8", `no file`},
		{"subfolder", "/x/index.html", "", 404, "application/json; charset=utf-8", `no file`},
		{"hidden", "/.git", "", 404, "application/json; charset=utf-8", `no file`},
		{"missing", "/nope.js", "", 404, "application/json; charset=utf-8", `no file \"/nope.js\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, "GET", tt.target, "", "Accept-Encoding", tt.gzip)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body.String())
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type %q, want %q", ct, tt.ctype)
			}
			body := w.Body.Bytes()
			if w.Header().Get("Content-Encoding") == "gzip" {
				if tt.gzip == "" {
					t.Fatal("gzip sent to a client that did not ask for it")
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			} else if tt.gzip != "" && tt.status == 200 && len(tt.want) > 4096 {
				t.Error("a large file went out uncompressed to a client that accepts gzip")
			}
			if tt.status == 200 && string(body) != tt.want {
				t.Errorf("body differs from the file (%d bytes, want %d)", len(body), len(tt.want))
			}
			if tt.status != 200 && !strings.Contains(string(body), tt.want) {
				t.Errorf("body %s lacks %s", body, tt.want)
			}
		})
	}
}

func TestRevalidate(t *testing.T) {
	s := newTestServer(t)
	w := do(s, "GET", "/caskg.wasm", "", "Accept-Encoding", "gzip")
	tag := w.Header().Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	if w := do(s, "GET", "/caskg.wasm", "", "Accept-Encoding", "gzip", "If-None-Match", tag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("revalidation: status %d with %d bytes, want 304 and none", w.Code, w.Body.Len())
	}
	if w := do(s, "GET", "/caskg.wasm", "", "If-None-Match", tag); w.Code != 200 {
		t.Errorf("the gzip ETag matched the identity body: status %d", w.Code)
	}
	if w := do(s, "HEAD", "/caskg.wasm", ""); w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: status %d, %d body bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
}

func TestTasks(t *testing.T) {
	s := newTestServer(t)
	w := do(s, "GET", "/tasks.json", "")
	var tasks []struct {
		ID, Query string
		Gold      []string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &tasks); err != nil || len(tasks) != 40 || tasks[0].ID != "t01" || len(tasks[0].Gold) == 0 {
		t.Fatalf("tasks.json: %v, %d tasks: %.200s", err, len(tasks), w.Body.String())
	}

	// Without --tasks the page still asks: an empty list, not a 404 it would log as an error.
	opts := testFiles(t)
	opts.Tasks = ""
	bare, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if w := do(bare, "GET", "/tasks.json", ""); w.Code != 200 || strings.TrimSpace(w.Body.String()) != "[]" {
		t.Errorf("tasks.json without tasks: status %d, body %q; want 200 and []", w.Code, w.Body.String())
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.skg")
	os.WriteFile(bad, []byte("not an artifact"), 0o644)
	badTasks := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(badTasks, []byte(`{"id": "a", "query": "x", "gold": ["no-such-skill"]}`+"\n"), 0o644)
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no artifact", func(o *Options) { o.Artifact = filepath.Join(dir, "none.skg") }, "serve: artifact: open"},
		{"not an artifact", func(o *Options) { o.Artifact = bad }, "bad.skg: not a caskg artifact"},
		{"no module", func(o *Options) { o.WASM = filepath.Join(dir, "caskg.wasm") }, "WebAssembly module not found; run 'make wasm'"},
		{"no page", func(o *Options) { o.Playground = dir }, "playground not found"},
		{"no JS", func(o *Options) { o.JS = dir }, "JS module not found"},
		{"unknown gold", func(o *Options) { o.Tasks = badTasks }, `tasks.jsonl: line 1: gold skill "no-such-skill" is not in the artifact`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testFiles(t)
			tt.edit(&o)
			s, err := New(o)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

// FuzzHandler sends arbitrary requests to the API and the file routes: every answer must be a
// well-formed status with JSON for the API, and no request may panic the handler.
func FuzzHandler(f *testing.F) {
	for _, seed := range []struct{ method, target, body string }{
		{"GET", "/v1/retrieve?q=heat+some+egg&k=4", ""},
		{"POST", "/v1/retrieve", `{"query": "heat some egg", "k": 3, "render": true}`},
		{"POST", "/v1/retrieve", `{"query": "x", "vector": [1, 2]}`},
		{"GET", "/v1/skills/find-object", ""},
		{"GET", "/app.js", ""},
		{"GET", "/..%2f..%2fgo.mod", ""},
	} {
		f.Add(seed.method, seed.target, seed.body)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://127.0.0.1"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code < 200 || w.Code >= 600 || w.Code == 500 {
			t.Fatalf("%s %s: status %d: %s", method, target, w.Code, w.Body.String())
		}
		if strings.HasPrefix(req.URL.Path, "/v1/") && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s: not JSON: %.200s", method, target, w.Body.String())
		}
	})
}

// smallLibrary returns the artifact of the sample's first n skills: another artifact, with other
// answers and another checksum.
func smallLibrary(tb testing.TB, n int) []byte {
	tb.Helper()
	dir := tb.TempDir()
	ents, err := os.ReadDir("../../graphs/sample")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents[:n] {
		b, err := os.ReadFile(filepath.Join("../../graphs/sample", e.Name(), "SKILL.md"))
		if err != nil {
			tb.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, e.Name()), 0o755)
		if err := os.WriteFile(filepath.Join(dir, e.Name(), "SKILL.md"), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return testlib.Build(tb, dir)
}

// replace writes data over path as caskg build does: a new file renamed over the old one.
func replace(tb testing.TB, path string, data []byte, mod time.Time) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

type health struct {
	Artifact struct {
		Checksum string `json:"checksum"`
		Skills   int    `json:"skills"`
		Path     string `json:"path"`
		Modified string `json:"modified"`
	} `json:"artifact"`
}

func get(tb testing.TB, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		tb.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		tb.Errorf("GET %s: status %d: %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestReload rewrites the artifact, atomically, back and forth while clients query it: every
// answer is wholly the old artifact's or wholly the new one's, the server takes each new file up
// within a bounded time, and health names the live file.
func TestReload(t *testing.T) {
	old := reloadEvery
	reloadEvery = 20 * time.Millisecond
	t.Cleanup(func() { reloadEvery = old })

	a, b := testlib.Sample(t), smallLibrary(t, 30)
	opts := testFiles(t)
	opts.Tasks = ""
	s, log := newReloading(t, opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	// What each artifact answers, from servers that never reload.
	const query = "/v1/retrieve?q=heat+some+egg+and+put+it+in+the+garbage+can&k=8"
	want := map[string]string{}
	checksums := map[string]string{}
	for name, data := range map[string][]byte{"old": a, "new": b} {
		o := testFiles(t)
		o.Tasks = ""
		o.Artifact = filepath.Join(t.TempDir(), "x.skg")
		os.WriteFile(o.Artifact, data, 0o644)
		ref, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		w := do(ref, "GET", query, "")
		want[w.Body.String()] = name
		var h health
		json.Unmarshal(do(ref, "GET", "/v1/health", "").Body.Bytes(), &h)
		checksums[h.Artifact.Checksum] = name
		ref.Close()
	}
	if len(want) != 2 || len(checksums) != 2 {
		t.Fatal("the two artifacts answer alike; the test could not tell them apart")
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	seen := make(chan string, 1<<16)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				body := get(t, ts.URL+query)
				name, ok := want[body]
				if !ok {
					t.Errorf("an answer of neither artifact: %.300s", body)
					return
				}
				seen <- name
			}
		})
	}
	// Bounded: 6 rewrites, each taken up within 5 s.
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 6 {
		data, name := b, "new"
		if i%2 == 1 {
			data, name = a, "old"
		}
		mod := base.Add(time.Duration(i+1) * time.Second)
		replace(t, opts.Artifact, data, mod)
		deadline := time.Now().Add(5 * time.Second)
		for {
			var h health
			if err := json.Unmarshal([]byte(get(t, ts.URL+"/v1/health")), &h); err != nil {
				t.Fatal(err)
			}
			if checksums[h.Artifact.Checksum] == name {
				abs, _ := filepath.Abs(opts.Artifact)
				if h.Artifact.Path != abs || h.Artifact.Modified != mod.UTC().Format(time.RFC3339Nano) {
					t.Errorf("health names %q modified %s, want %q modified %s", h.Artifact.Path, h.Artifact.Modified, abs, mod.UTC().Format(time.RFC3339Nano))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("rewrite %d: the %s artifact is not live after 5 s; log:\n%s", i, name, log)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	close(seen)
	count := map[string]int{}
	for name := range seen {
		count[name]++
	}
	if count["old"] == 0 || count["new"] == 0 {
		t.Errorf("answers seen: %v; want both artifacts'", count)
	}
	if got := strings.Count(log.String(), "reloaded "); got != 6 {
		t.Errorf("%d reloads logged, want 6:\n%s", got, log)
	}
	if s.Engine().Graph().NumSkills() != 96 {
		t.Errorf("Engine has %d skills, want the live artifact's 96", s.Engine().Graph().NumSkills())
	}
}

// TestReloadBad replaces the artifact with files that must not go live: the old artifact keeps
// answering, the log says why once per file, and a good file afterwards goes live.
func TestReloadBad(t *testing.T) {
	old := reloadEvery
	reloadEvery = 0
	t.Cleanup(func() { reloadEvery = old })

	opts := testFiles(t) // with the sample tasks: an artifact without their gold skills is refused
	s, log := newReloading(t, opts)
	before := do(s, "GET", "/v1/health", "").Body.String()
	settle := func() {
		do(s, "GET", "/v1/health", "")
		s.wg.Wait() // the reload the request started
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, bad := range []struct {
		name         string
		data         []byte
		want, health string
	}{
		{"text", []byte("not an artifact"), "not a caskg artifact", "not a caskg artifact"},
		{"cut", testlib.Sample(t)[:1000], "keeping the live artifact", "artifact truncated"},
		{"tasks' gold missing", smallLibrary(t, 10), "is not in the artifact", "is not in the artifact"},
	} {
		replace(t, opts.Artifact, bad.data, base.Add(time.Duration(i)*time.Second))
		settle()
		settle() // the same file again: refused without another decode or log line
		// Health says the live artifact is not the file's, and why, and is otherwise the same.
		got := do(s, "GET", "/v1/health", "").Body.String()
		head, rest, _ := strings.Cut(got, `","version":`)
		if !strings.HasPrefix(head, `{"status":"stale","stale":"the file changed and does not load; serving the artifact before it: `) ||
			!strings.Contains(head, bad.health) || `{"status":"ok","version":`+rest != before {
			t.Errorf("%s: health %s, want it stale with %q and otherwise %s", bad.name, got, bad.health, before)
		}
		if n := strings.Count(log.String(), "keeping the live artifact"); n != i+1 || !strings.Contains(log.String(), bad.want) {
			t.Errorf("%s: log has %d refusals, want %d, and %q:\n%s", bad.name, n, i+1, bad.want, log)
		}
	}
	os.Remove(opts.Artifact)
	settle()
	settle()
	if n := strings.Count(log.String(), "no such file"); n != 1 {
		t.Errorf("a missing file is logged %d times, want once:\n%s", n, log)
	}
	if got := do(s, "GET", "/v1/health", "").Body.String(); !strings.HasPrefix(got, `{"status":"stale","stale":"stat `) || !strings.Contains(got, "no such file") {
		t.Errorf("health with the file gone: %s", got)
	}
	replace(t, opts.Artifact, testlib.Sample(t), base.Add(time.Minute))
	settle()
	if got := do(s, "GET", "/v1/health", "").Body.String(); got == before || !strings.Contains(got, `"skills":96`) || !strings.HasPrefix(got, `{"status":"ok",`) {
		t.Errorf("health after a good file: %s", got)
	}
}

// TestNoReload: without Options.Reload the artifact stays as it was read, and health is the
// worker's, naming no file.
func TestNoReload(t *testing.T) {
	old := reloadEvery
	reloadEvery = 0
	t.Cleanup(func() { reloadEvery = old })
	opts := testFiles(t)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := do(s, "GET", "/v1/health", "").Body.String()
	replace(t, opts.Artifact, smallLibrary(t, 96), time.Now().Add(time.Hour))
	do(s, "GET", "/v1/health", "")
	s.wg.Wait()
	if got := do(s, "GET", "/v1/health", "").Body.String(); got != before || strings.Contains(got, `"path"`) {
		t.Errorf("health %s, want %s", got, before)
	}
}

// TestEmbedded serves the copies embedded in the binary when no folder is given, and a binary
// built without them refuses to start with the way to build them.
func TestEmbedded(t *testing.T) {
	old := embedded
	t.Cleanup(func() { embedded = old })
	files := fstest.MapFS{
		"assets/README.md":             {Data: []byte("placeholder")},
		"assets/playground/index.html": {Data: []byte("<title>caskg playground</title>")},
		"assets/playground/app.js":     {Data: []byte("export {}")},
		"assets/js/caskg.js":           {Data: []byte("export class Caskg {}")},
		"assets/caskg.wasm":            {Data: []byte("\x00asm\x01\x00\x00\x00")},
	}
	embedded = files
	opts := Options{Artifact: testlib.SampleFile(t), Version: "test"}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, ctype, want string }{
		{"/", "text/html; charset=utf-8", "<title>caskg playground</title>"},
		{"/app.js", "text/javascript; charset=utf-8", "export {}"},
		{"/caskg.js", "text/javascript; charset=utf-8", "export class Caskg {}"},
		{"/caskg.wasm", "application/wasm", "\x00asm\x01\x00\x00\x00"},
	} {
		w := do(s, "GET", c.target, "")
		if w.Code != 200 || w.Header().Get("Content-Type") != c.ctype || w.Body.String() != c.want {
			t.Errorf("%s: %d %q %q; want 200 %q %q", c.target, w.Code, w.Header().Get("Content-Type"), w.Body, c.ctype, c.want)
		}
	}
	if w := do(s, "GET", "/README.md", ""); w.Code != 404 {
		t.Errorf("/README.md: status %d, want 404", w.Code)
	}
	s.Close()

	for _, missing := range []string{"assets/caskg.wasm", "assets/playground/index.html", "assets/js/caskg.js"} {
		m := fstest.MapFS{}
		for k, v := range files {
			if k != missing {
				m[k] = v
			}
		}
		embedded = m
		s, err := New(opts)
		if err == nil {
			s.Close()
			t.Fatalf("without %s: no error", missing)
		}
		if !strings.Contains(err.Error(), missing+") is not embedded") || !strings.Contains(err.Error(), "run 'make build'") {
			t.Errorf("without %s: %v", missing, err)
		}
	}
	// A folder given for a part replaces the embedded copy, which need not be there.
	embedded = fstest.MapFS{"assets/README.md": {Data: []byte("placeholder")}}
	o := testFiles(t)
	if s, err := New(o); err != nil {
		t.Errorf("live files with nothing embedded: %v", err)
	} else {
		s.Close()
	}
}

// newReloading starts a server over opts that reloads its artifact, logging into the returned
// logs, and closes it when the test ends.
func newReloading(t *testing.T, opts Options) (*Server, *fixture.Logs) {
	t.Helper()
	opts.Reload = true
	log := &fixture.Logs{}
	opts.Logf = log.Logf
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, log
}
