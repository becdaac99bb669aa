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
	"testing"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/testlib"
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
		{"k over the limit", "GET", "/v1/retrieve?q=x&k=101", "", 400, `{"error":"api: parameter \"k\": \"101\" is not a whole number in [1, 100]"}`, true},
		{"big body", "POST", "/v1/retrieve", `{"query": "` + strings.Repeat("a", api.MaxBodyBytes) + `"}`, 413, `at most 65536`, true},
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
