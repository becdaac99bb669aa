package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// The worker's handler (package api's) runs natively here, under workerd in e2e_test.go and
// beside caskg serve in parity_test.go, on the same cases.

func sampleServer(tb testing.TB) http.Handler {
	tb.Helper()
	s, err := newServer(testlib.Sample(tb), "", nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// apiCase is one request and what a client must see: the status, a part of the body and, when
// given, a header's value. The cases under api.Prefix are the API's contract: the worker
// natively, the worker under workerd (e2e_test.go) and caskg serve (parity_test.go) must all
// answer them with the same bytes.
type apiCase struct {
	name, method, target, body string
	header                     map[string]string // request headers
	status                     int
	want                       string // a substring of the body
	wantHeader                 [2]string
	// serve, when set, is a substring of caskg serve's body, which differs from the worker's
	// by design; status and key headers must still agree.
	serve string
}

var longQuery = strings.Repeat("heat the egg ", 700) // 9,100 bytes

func apiCases() []apiCase {
	return []apiCase{
		{name: "health", method: "GET", target: "/v1/health", status: 200,
			want: `"artifact":{"format":"2.0","checksum":"crc32c:`},
		{name: "health counts", method: "GET", target: "/v1/health", status: 200, want: `"skills":96,"edges":`},
		{name: "health version", method: "GET", target: "/v1/health", status: 200, want: `{"status":"ok","version":"` + engine.Version + `","go":"go`},
		{name: "retrieve GET", method: "GET", target: "/v1/retrieve?q=heat+some+egg&k=3", status: 200,
			want: `{"results":[{"name":"heat-object-in-microwave","score":`},
		{name: "retrieve GET render", method: "GET", target: "/v1/retrieve?q=heat%20some%20egg&k=2&render=1", status: 200,
			want: `"rendered":"2 skills for this task`},
		{name: "retrieve GET no graph", method: "GET", target: "/v1/retrieve?q=heat+some+egg&no_graph=true", status: 200,
			want: `"seed_rank":1`},
		{name: "retrieve GET k at the limit", method: "GET", target: "/v1/retrieve?q=egg&k=100", status: 200, want: `{"results":[{"name":`},
		{name: "retrieve GET no q", method: "GET", target: "/v1/retrieve?k=3", status: 400, want: `{"error":"api: parameter \"q\": missing`},
		{name: "retrieve GET empty q", method: "GET", target: "/v1/retrieve?q=+", status: 400, want: `"engine: empty query"`},
		{name: "retrieve GET k zero", method: "GET", target: "/v1/retrieve?q=egg&k=0", status: 400,
			want: `{"error":"api: parameter \"k\": 0 is outside [1, 100]"}`},
		{name: "retrieve GET k too big", method: "GET", target: "/v1/retrieve?q=egg&k=101", status: 400, want: `parameter \"k\": 101 is outside [1, 100]`},
		{name: "retrieve GET k not a number", method: "GET", target: "/v1/retrieve?q=egg&k=ten", status: 400, want: `parameter \"k\": \"ten\"`},
		{name: "retrieve GET long query", method: "GET", target: "/v1/retrieve?q=" + url.QueryEscape(longQuery), status: 400,
			want: `{"error":"api: parameter \"q\": 9100 bytes, at most 8192"}`},
		{name: "retrieve GET unknown parameter", method: "GET", target: "/v1/retrieve?q=egg&top=3", status: 400,
			want: `unknown parameter \"top\"`},
		{name: "retrieve GET repeated parameter", method: "GET", target: "/v1/retrieve?q=egg&q=fork", status: 400,
			want: `parameter \"q\" is given 2 times`},
		{name: "retrieve GET bad bool", method: "GET", target: "/v1/retrieve?q=egg&render=yes", status: 400,
			want: `parameter \"render\": \"yes\"`},
		// Parameters are read in sorted order: k's error, not render's, whatever the map's order.
		{name: "retrieve GET two bad parameters", method: "GET", target: "/v1/retrieve?render=yes&q=egg&k=0", status: 400,
			want: `parameter \"k\"`},
		{name: "retrieve GET bad escape", method: "GET", target: "/v1/retrieve?q=%zz", status: 400, want: `api: query string: `},
		// A filter narrows the answer on every host alike (engine.Filter).
		{name: "retrieve GET filter", method: "GET", target: "/v1/retrieve?q=heat+some+egg&k=2&deny=*microwave*&deny=identify-*", status: 200,
			want: `{"results":[{"name":"verify-object-hot","score":1,"match":0.`},
		{name: "retrieve GET filter no match", method: "GET", target: "/v1/retrieve?q=heat+some+egg&allow=fly-*", status: 200,
			want: `{"results":[],"match":0,"note":"no skill matches this task well (match below 0.4)"}`},
		{name: "retrieve GET min_score", method: "GET", target: "/v1/retrieve?q=purple+elephant+bicycle+sandwich&min_score=0.4", status: 200,
			want: `{"results":[],"match":0.1`},
		{name: "retrieve GET bad glob", method: "GET", target: "/v1/retrieve?q=egg&allow=a*,%5Bb", status: 400,
			want: `{"error":"engine: field \"filter.allow[1]\": '[', ']' and '\\' are reserved`},
		{name: "retrieve POST filter", method: "POST", target: "/v1/retrieve", body: `{"query":"put a cool tomato in the microwave","k":1,"filter":{"allow":["*-object-*"],"deny":["cool-*"]}}`,
			header: map[string]string{"Content-Type": "application/json"}, status: 200, want: `{"results":[{"name":"verify-object-cold","score":1,"match":0.`},
		{name: "retrieve POST filter over a limit", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","filter":{"namespaces":["` + strings.Repeat("n", 257) + `"]}}`,
			status: 400, want: `{"error":"service: field \"filter.namespaces[0]\": 257 bytes, at most 256"}`},
		{name: "retrieve POST", method: "POST", target: "/v1/retrieve", body: `{"query":"put a cool tomato in the microwave","k":5}`,
			header: map[string]string{"Content-Type": "application/json"}, status: 200, want: `{"results":[{"name":"cool-object-in-fridge"`},
		{name: "retrieve POST bad JSON", method: "POST", target: "/v1/retrieve", body: `{"query":"egg",`, status: 400,
			want: `api: body: json at offset 15`},
		{name: "retrieve POST unknown field", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","K":3}`, status: 400,
			want: `field \"K\": unknown field`},
		{name: "retrieve POST wrong type", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","k":"3"}`, status: 400,
			want: `api: body: json at offset 19: field \"k\": want a number, got a string`},
		{name: "retrieve POST two values", method: "POST", target: "/v1/retrieve", body: `{"query":"egg"} {}`, status: 400,
			want: `data after the JSON value`},
		{name: "retrieve POST empty body", method: "POST", target: "/v1/retrieve", status: 400, want: `body: want a JSON request`},
		// The answer comes before the body is read: without Expect, the client may still be
		// writing when workerd closes the connection (about 1 request in 150 over loopback).
		{name: "retrieve POST oversized body", method: "POST", target: "/v1/retrieve",
			body: `{"query":"` + strings.Repeat("egg ", 17000) + `"}`, header: map[string]string{"Expect": "100-continue"},
			status: 413, want: `{"error":"api: body is 68012 bytes, at most 65536"}`},
		{name: "retrieve POST long query", method: "POST", target: "/v1/retrieve", body: `{"query":"` + longQuery + `"}`,
			status: 400, want: `{"error":"service: field \"query\": 9100 bytes, at most 8192"}`},
		{name: "retrieve POST k too big", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","k":1000}`, status: 400,
			want: `{"error":"service: field \"k\": 1000 is outside [1, 100]"}`},
		{name: "retrieve POST k negative", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","k":-1}`, status: 400,
			want: `field \"k\": -1 is outside [1, 100]`},
		{name: "retrieve POST seeds too many", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","seeds":101}`, status: 400,
			want: `{"error":"service: field \"seeds\": 101 is outside [1, 100]"}`},
		{name: "retrieve POST engine check", method: "POST", target: "/v1/retrieve", body: `{"query":"egg","gamma":2}`, status: 400,
			want: `{"error":"engine: field \"gamma\": 2 is outside (0, 1]"}`},
		{name: "retrieve PUT", method: "PUT", target: "/v1/retrieve", body: `{}`, status: 405,
			want: `{"error":"api: PUT /v1/retrieve: allowed are GET, POST, OPTIONS"}`, wantHeader: [2]string{"Allow", "GET, POST, OPTIONS"}},
		{name: "health POST", method: "POST", target: "/v1/health", body: `{}`, status: 405, want: `allowed are GET, OPTIONS`},
		// HEAD is not an API method: the answer's body is dropped on the way, its status and
		// Allow remain.
		{name: "health HEAD", method: "HEAD", target: "/v1/health", status: 405, wantHeader: [2]string{"Allow", "GET, OPTIONS"}},
		{name: "preflight", method: "OPTIONS", target: "/v1/retrieve",
			header: map[string]string{"Origin": "https://agent.example", "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "content-type"},
			status: 204, wantHeader: [2]string{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"}},
		{name: "preflight headers", method: "OPTIONS", target: "/v1/skills/find-object", status: 204,
			wantHeader: [2]string{"Access-Control-Allow-Headers", "Content-Type"}},
		{name: "preflight age", method: "OPTIONS", target: "/v1/health", status: 204,
			wantHeader: [2]string{"Access-Control-Max-Age", "86400"}},
		// Neither host has a feedback store here: 501, naming what each host needs.
		{name: "feedback without a store", method: "POST", target: "/v1/feedback",
			body: `{"query":"heat some egg","used":["heat-object-in-microwave"],"outcome":"success"}`, status: 501,
			want:  `{"error":"worker: feedback is not configured on this worker: it records no reports (bind a Workers KV namespace as CASKG_FEEDBACK to record them)"}`,
			serve: `{"error":"api: feedback is not configured on this server: it records no reports (caskg serve records them with --feedback FILE)"}`},
		{name: "feedback GET", method: "GET", target: "/v1/feedback", status: 405,
			want: `{"error":"api: GET /v1/feedback: allowed are POST, OPTIONS"}`, wantHeader: [2]string{"Allow", "POST, OPTIONS"}},
		{name: "feedback preflight", method: "OPTIONS", target: "/v1/feedback", status: 204,
			wantHeader: [2]string{"Access-Control-Allow-Methods", "POST, OPTIONS"}},
		{name: "skill", method: "GET", target: "/v1/skills/pick-up-object", status: 200,
			want: `{"name":"pick-up-object","description":"Take a located object`},
		{name: "skill edges", method: "GET", target: "/v1/skills/heat-object-in-microwave", status: 200,
			want: `{"name":"go-to-location","type":"dependency","state":"confirmed","weight":0.8}`},
		{name: "skill escaped", method: "GET", target: "/v1/skills/pick%2Dup%2Dobject", status: 200, want: `{"name":"pick-up-object"`},
		{name: "skill unknown", method: "GET", target: "/v1/skills/fly-to-the-moon", status: 404,
			want: `{"error":"api: no skill named \"fly-to-the-moon\"`},
		{name: "skill transposed", method: "GET", target: "/v1/skills/pick-up-obejct", status: 404,
			want: `{"error":"api: no skill named \"pick-up-obejct\"; the closest names are: pick-up-object`},
		{name: "skill with markup", method: "GET", target: "/v1/skills/%3Cb%3E", status: 404,
			want: `{"error":"api: no skill named \"\u003cb\u003e\"`},
		{name: "skills without a name", method: "GET", target: "/v1/skills/", status: 404, want: `no route \"/v1/skills/\"`},
		{name: "unknown route", method: "GET", target: "/v1/retrieval?q=egg", status: 404,
			want: `{"error":"api: no route \"/v1/retrieval\"; the routes are GET /v1/retrieve?q=…\u0026k=…, POST /v1/retrieve, GET /v1/skills/{name}, GET /v1/health and POST /v1/feedback"}`},
		// Outside the API's prefix: the worker answers these, serve its static files.
		{name: "other version", method: "GET", target: "/v2/retrieve?q=egg", status: 404, want: `no route \"/v2/retrieve\"`},
		{name: "root", method: "GET", target: "/", status: 404, want: `no route \"/\"`},
	}
}

// checkAnswer holds an answer to a case: status, the CORS header on every answer, a JSON body
// (an error object for 4xx) holding the wanted part, and the wanted header.
func checkAnswer(t *testing.T, c apiCase, status int, h http.Header, body []byte) {
	t.Helper()
	if status != c.status {
		t.Errorf("%s %s: status %d, want %d; body %s", c.method, c.target, status, c.status, body)
	}
	if got := h.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("%s %s: Access-Control-Allow-Origin %q, want *", c.method, c.target, got)
	}
	if c.wantHeader[0] != "" && h.Get(c.wantHeader[0]) != c.wantHeader[1] {
		t.Errorf("%s %s: %s %q, want %q", c.method, c.target, c.wantHeader[0], h.Get(c.wantHeader[0]), c.wantHeader[1])
	}
	if status == http.StatusNoContent || c.method == "HEAD" && len(body) == 0 {
		if len(body) != 0 {
			t.Errorf("%s %s: 204 with body %q", c.method, c.target, body)
		}
		return
	}
	if ct := h.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s %s: Content-Type %q", c.method, c.target, ct)
	}
	if cc := h.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s %s: Cache-Control %q, want no-store", c.method, c.target, cc)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s: body is not a JSON object (%v): %s", c.method, c.target, err, body)
	}
	if _, isErr := v["error"]; isErr != (status >= 400) {
		t.Errorf("%s %s: status %d with body %s", c.method, c.target, status, body)
	}
	if !bytes.Contains(body, []byte(c.want)) {
		t.Errorf("%s %s: body %s\nwant it to contain %s", c.method, c.target, body, c.want)
	}
}

func serveNative(s http.Handler, c apiCase) *httptest.ResponseRecorder {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r := httptest.NewRequest(c.method, c.target, body)
	for k, v := range c.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func TestHandler(t *testing.T) {
	s := sampleServer(t)
	for _, c := range apiCases() {
		t.Run(c.name, func(t *testing.T) {
			w := serveNative(s, c)
			checkAnswer(t, c, w.Code, w.Header(), w.Body.Bytes())
		})
	}
}

func TestBadArtifact(t *testing.T) {
	for _, tt := range testlib.BadArtifacts(testlib.Sample(t)) {
		t.Run(tt.Name, func(t *testing.T) {
			want := "worker: artifact: " + tt.Err.Error()
			if _, err := newServer(tt.Data, "", nil, nil); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("newServer = %v, want an error starting %q", err, want)
			}
		})
	}
}

// task is a line of graphs/sample-tasks.jsonl.
type task struct {
	ID    string `json:"id"`
	Query string `json:"query"`
}

func sampleTasks(tb testing.TB) []task {
	tb.Helper()
	b, err := os.ReadFile("../../graphs/sample-tasks.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	var tasks []task
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var t task
		if err := json.Unmarshal(line, &t); err != nil {
			tb.Fatalf("sample-tasks.jsonl:%d: %v", i+1, err)
		}
		tasks = append(tasks, t)
	}
	if len(tasks) != 40 {
		tb.Fatalf("sample-tasks.jsonl has %d tasks, want 40", len(tasks))
	}
	return tasks
}

// retrieveCases asks for a task's top 10 by GET and by POST.
func retrieveCases(t task) []apiCase {
	post, _ := json.Marshal(engine.Request{Query: t.Query, K: 10})
	return []apiCase{
		{name: t.ID + " GET", method: "GET", target: "/v1/retrieve?k=10&q=" + url.QueryEscape(t.Query), status: 200},
		{name: t.ID + " POST", method: "POST", target: "/v1/retrieve", body: string(post), status: 200},
	}
}

func nativeJSON(tb testing.TB, eng *engine.Engine, t task) string {
	tb.Helper()
	resp, err := eng.Query(engine.Request{Query: t.Query, K: 10})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// FuzzHandler sends arbitrary requests: every answer is JSON (an error object unless 200) and
// nothing panics (a panic would be a 500; the worker's 501 for feedback is by design).
func FuzzHandler(f *testing.F) {
	for _, c := range apiCases() {
		u, _ := url.Parse(c.target)
		f.Add(c.method, u.EscapedPath(), u.RawQuery, []byte(c.body))
	}
	s := sampleServer(f)
	f.Fuzz(func(t *testing.T, method, path, rawQuery string, body []byte) {
		r := &http.Request{Method: method, URL: &url.URL{Path: path, RawPath: path, RawQuery: rawQuery},
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code == http.StatusNoContent {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s?%s: body is not JSON (%v): %s", method, path, rawQuery, err, w.Body)
		}
		if _, isErr := v["error"]; w.Code >= 500 && w.Code != http.StatusNotImplemented || isErr != (w.Code != 200) {
			t.Fatalf("%s %s?%s: %d %s", method, path, rawQuery, w.Code, w.Body)
		}
	})
}
