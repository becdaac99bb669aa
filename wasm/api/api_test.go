package api

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// The routes as a client sees them are tested in wasm/worker, where the worker natively, the
// worker under workerd and caskg serve answer one table of requests; these tests hold the
// pieces: limits, decoding, the envelope, the bodies' bytes.

func sampleHandler(tb testing.TB) *Handler {
	tb.Helper()
	h, err := New(testlib.Sample(tb), Options{Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		in    engine.Request
		want  string // "" for no error
		given []string
	}{
		{"defaults", engine.Request{Query: "egg"}, "", nil},
		{"at the limits", engine.Request{Query: strings.Repeat("é", service.MaxQueryBytes/2), K: service.MaxK, Seeds: service.MaxSeeds}, "", nil},
		{"query a byte over", engine.Request{Query: strings.Repeat("é", service.MaxQueryBytes/2) + "x"}, `service: field "query": 8193 bytes, at most 8192`, nil},
		{"k over", engine.Request{Query: "egg", K: service.MaxK + 1}, `service: field "k": 101 is outside [1, 100]`, nil},
		{"k negative", engine.Request{Query: "egg", K: -1}, `service: field "k": -1 is outside [1, 100]`, nil},
		{"k the engine's bound", engine.Request{Query: "egg", K: engine.MaxK}, `service: field "k": 1000 is outside [1, 100]`, nil},
		{"seeds over", engine.Request{Query: "egg", Seeds: service.MaxSeeds + 1}, `service: field "seeds": 101 is outside [1, 100]`, nil},
		{"seeds negative", engine.Request{Query: "egg", Seeds: -2}, `service: field "seeds": -2 is outside [1, 100]`, nil},
		{"filter at the limits", engine.Request{Query: "egg", Filter: engine.Filter{Allow: make([]string, service.MaxFilterPatterns), Namespaces: []string{strings.Repeat("n", service.MaxPatternBytes)}}}, "", nil},
		{"allow too many", engine.Request{Query: "egg", Filter: engine.Filter{Allow: make([]string, service.MaxFilterPatterns+1)}}, `service: field "filter.allow": 101 entries, at most 100`, nil},
		{"deny entry too long", engine.Request{Query: "egg", Filter: engine.Filter{Deny: []string{"a*", strings.Repeat("d", service.MaxPatternBytes+1)}}}, `service: field "filter.deny[1]": 257 bytes, at most 256`, nil},
		{"namespaces too many", engine.Request{Query: "egg", Filter: engine.Filter{Namespaces: make([]string, service.MaxFilterPatterns+1)}}, `service: field "filter.namespaces": 101 entries, at most 100`, nil},
		// The engine judges what the limits do not cover.
		{"empty query", engine.Request{}, "", nil},
		{"bad glob", engine.Request{Query: "egg", Filter: engine.Filter{Allow: []string{"[a"}}}, "", nil},
		{"gamma", engine.Request{Query: "egg", Gamma: 7}, "", nil},
		// A zero the caller wrote is out of range; one left out is the default.
		{"k given 0", engine.Request{Query: "egg"}, `service: field "k": 0 is outside [1, 100]`, []string{"k"}},
		{"seeds given 0", engine.Request{Query: "egg", K: 3}, `service: field "seeds": 0 is outside [1, 100]`, []string{"k", "seeds"}},
		{"k given in range", engine.Request{Query: "egg", K: service.MaxK}, "", []string{"k"}},
		{"eval's bound", engine.Request{Query: "egg", K: engine.MaxK}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := service.Service
			if tt.name == "eval's bound" {
				lim.K = engine.MaxK
			}
			err := lim.Check(tt.in, tt.given...)
			if got := errText(err); got != tt.want {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
			var fe *service.FieldError
			if err != nil && (!errors.As(err, &fe) || fe.Error() != err.Error()) {
				t.Errorf("Check = %#v, want a *FieldError", err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The limits are tighter than the engine's, or a request within them could still be refused
// by the engine with another message.
func TestLimitsWithinEngine(t *testing.T) {
	if service.MaxFilterPatterns > engine.MaxFilterPatterns || service.MaxPatternBytes > engine.MaxPatternBytes {
		t.Errorf("filter limits %d entries of %d bytes exceed the engine's %d of %d",
			service.MaxFilterPatterns, service.MaxPatternBytes, engine.MaxFilterPatterns, engine.MaxPatternBytes)
	}
	if service.MaxK > engine.MaxK || service.MaxSeeds > engine.MaxSeeds || service.MaxQueryBytes > engine.MaxQueryBytes {
		t.Errorf("limits k %d, seeds %d, query %d exceed the engine's %d, %d, %d",
			service.MaxK, service.MaxSeeds, service.MaxQueryBytes, engine.MaxK, engine.MaxSeeds, engine.MaxQueryBytes)
	}
	// A body holds a query at the limit and a vector of 1,024 dimensions.
	vec := make([]float32, 1024)
	for i := range vec {
		vec[i] = -0.012345678
	}
	b, _ := json.Marshal(engine.Request{Query: strings.Repeat("x", service.MaxQueryBytes), Vector: vec})
	if len(b) > service.MaxBodyBytes {
		t.Errorf("a request at the query limit with a 1,024-dimension vector is %d bytes, over service.MaxBodyBytes %d", len(b), service.MaxBodyBytes)
	}
}

func TestReadQuery(t *testing.T) {
	tests := []struct {
		name, in string
		want     engine.Request
		err      string
	}{
		{name: "q", in: "q=heat+an+egg", want: engine.Request{Query: "heat an egg"}},
		{name: "all", in: "render=true&k=4&no_graph=1&q=egg", want: engine.Request{Query: "egg", K: 4, NoGraph: true, Render: true}},
		{name: "false", in: "q=egg&render=0&no_graph=false", want: engine.Request{Query: "egg"}},
		{name: "k at the limit", in: "q=egg&k=100", want: engine.Request{Query: "egg", K: 100}},
		{name: "q at the limit", in: "q=" + strings.Repeat("a", service.MaxQueryBytes), want: engine.Request{Query: strings.Repeat("a", service.MaxQueryBytes)}},
		{name: "empty q", in: "q=", want: engine.Request{}}, // the engine's to refuse
		{name: "no q", in: "k=3", err: `api: parameter "q": missing; GET /v1/retrieve?q=heat+an+egg&k=8`},
		{name: "k over", in: "q=egg&k=101", err: `api: parameter "k": 101 is outside [1, 100]`},
		{name: "k zero", in: "q=egg&k=0", err: `api: parameter "k": 0 is outside [1, 100]`},
		{name: "k fraction", in: "q=egg&k=2.5", err: `api: parameter "k": "2.5" is not a whole number`},
		{name: "q over", in: "q=" + strings.Repeat("a", service.MaxQueryBytes+1), err: `api: parameter "q": 8193 bytes, at most 8192`},
		{name: "twice", in: "q=a&q=b", err: `api: parameter "q" is given 2 times`},
		{name: "bad bool", in: "q=a&no_graph=yes", err: `api: parameter "no_graph": "yes" is not 1, 0, true or false`},
		{name: "unknown", in: "q=a&gamma=1", err: `api: unknown parameter "gamma"; the parameters are q, k, no_graph, render, min_score, allow, deny and namespaces`},
		{name: "q not UTF-8", in: "q=%ff%fe", err: `api: parameter "q": not valid UTF-8`},
		{name: "min_score", in: "q=egg&min_score=0.4", want: engine.Request{Query: "egg", MinScore: 0.4}},
		{name: "min_score over", in: "q=egg&min_score=1.5", err: `api: parameter "min_score": "1.5" is not a number in [0, 1]`},
		{name: "min_score NaN", in: "q=egg&min_score=NaN", err: `api: parameter "min_score": "NaN" is not a number in [0, 1]`},
		{name: "filter", in: "q=egg&allow=gh__*,jira__*&deny=*delete*&namespaces=gh", want: engine.Request{Query: "egg",
			Filter: engine.Filter{Allow: []string{"gh__*", "jira__*"}, Deny: []string{"*delete*"}, Namespaces: []string{"gh"}}}},
		{name: "filter repeated", in: "q=egg&deny=a*&deny=b*,c*", want: engine.Request{Query: "egg", Filter: engine.Filter{Deny: []string{"a*", "b*", "c*"}}}},
		{name: "filter empty entry", in: "q=egg&allow=a*,", want: engine.Request{Query: "egg", Filter: engine.Filter{Allow: []string{"a*", ""}}}}, // the engine's to refuse
		{name: "filter too many", in: "q=egg&namespaces=" + strings.Repeat("n,", service.MaxFilterPatterns) + "n", err: `api: parameter "namespaces": field "filter.namespaces": 101 entries, at most 100`},
		{name: "filter entry too long", in: "q=egg&allow=" + strings.Repeat("a", service.MaxPatternBytes+1), err: `api: parameter "allow": field "filter.allow[0]": 257 bytes, at most 256`},
		{name: "bad escape", in: "q=%zz", err: `api: query string: invalid URL escape "%zz"`},
		// Sorted order: k before render and before the unknown z, whatever the map's order.
		{name: "first in order", in: "z=1&render=yes&k=0&q=a", err: `api: parameter "k": 0 is outside [1, 100]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 { // map order varies from run to run
				got, err := readQuery(tt.in)
				if errText(err) != tt.err {
					t.Fatalf("readQuery(%.40q) error %q, want %q", tt.in, errText(err), tt.err)
				}
				if err == nil && !cmp.Equal(got, tt.want) {
					t.Fatalf("readQuery(%.40q) = %+v, want %+v", tt.in, got, tt.want)
				}
			}
		})
	}
}

// errReader fails after its text.
type errReader struct{ r io.Reader }

func (e errReader) Read(p []byte) (int, error) {
	if n, err := e.r.Read(p); err != io.EOF {
		return n, err
	}
	return 0, errors.New("connection reset")
}

func TestReadBody(t *testing.T) {
	big := `{"query":"` + strings.Repeat("x", service.MaxBodyBytes) + `"}`
	tests := []struct {
		name   string
		body   io.Reader
		length int64 // -1: unknown, as for a chunked body
		want   engine.Request
		status int
		err    string
	}{
		{name: "request", body: strings.NewReader(`{"query": "egg", "k": 3, "seeds": 2, "render": true}`), length: -1,
			want: engine.Request{Query: "egg", K: 3, Seeds: 2, Render: true}},
		{name: "vector", body: strings.NewReader(`{"query": "egg", "vector": [0.5, -1]}`), length: -1,
			want: engine.Request{Query: "egg", Vector: []float32{0.5, -1}}},
		{name: "filter", body: strings.NewReader(`{"query": "egg", "filter": {"allow": ["gh__*"], "deny": ["*delete*"], "namespaces": ["gh"]}}`), length: -1,
			want: engine.Request{Query: "egg", Filter: engine.Filter{Allow: []string{"gh__*"}, Deny: []string{"*delete*"}, Namespaces: []string{"gh"}}}},
		{name: "filter tags", body: strings.NewReader(`{"query": "egg", "filter": {"tags": ["pdf"]}}`), length: -1, status: 400, err: `field "filter.tags": unknown field`},
		{name: "filter over a limit", body: strings.NewReader(`{"query": "egg", "filter": {"deny": ["` + strings.Repeat("d", service.MaxPatternBytes+1) + `"]}}`), length: -1, status: 400,
			err: `service: field "filter.deny[0]": 257 bytes, at most 256`},
		{name: "no body", length: 0, status: 400, err: `api: body: want a JSON request such as {"query": "heat an egg", "k": 8}`},
		{name: "white space", body: strings.NewReader(" \n\t"), length: 3, status: 400, err: `api: body: want a JSON request`},
		{name: "declared too long", body: strings.NewReader("{}"), length: service.MaxBodyBytes + 1, status: 413, err: `api: body is 65537 bytes, at most 65536`},
		{name: "too long", body: strings.NewReader(big), length: -1, status: 413, err: `api: body is larger than 65536 bytes`},
		{name: "read error", body: errReader{strings.NewReader(`{"query"`)}, length: -1, status: 400, err: `api: reading the body: connection reset`},
		{name: "not UTF-8", body: strings.NewReader("{\"query\": \"heat \xff egg\"}"), length: -1, status: 400, err: `api: body: not valid UTF-8 at byte 16`},
		{name: "bad JSON", body: strings.NewReader(`{"query": `), length: -1, status: 400, err: `api: body: json at offset 10: field "query": want a string, got the end of the input`},
		{name: "field type", body: strings.NewReader(`{"query": 5}`), length: -1, status: 400, err: `api: body: json at offset 10: field "query": want a string, got a number`},
		{name: "unknown field", body: strings.NewReader(`{"query": "x", "kk": 1}`), length: -1, status: 400, err: `field "kk": unknown field`},
		{name: "two values", body: strings.NewReader(`{"query": "x"} {}`), length: -1, status: 400, err: `data after the JSON value`},
		{name: "over a limit", body: strings.NewReader(`{"query": "x", "k": 101}`), length: -1, status: 400, err: `service: field "k": 101 is outside [1, 100]`},
		{name: "integers as Python writes floats", body: strings.NewReader(`{"query": "egg", "k": 3.0, "seeds": 2.0, "skill_budget": 2.4e3, "total_budget": 12000.0}`), length: -1,
			want: engine.Request{Query: "egg", K: 3, Seeds: 2, SkillBudget: 2400, TotalBudget: 12000}},
		{name: "fraction for an integer", body: strings.NewReader(`{"query": "egg", "k": 3.5}`), length: -1, status: 400,
			err: `api: body: json at offset 25: field "k": number 3.5 is not a whole number`},
		{name: "fraction for seeds", body: strings.NewReader(`{"query": "egg", "seeds": 0.5}`), length: -1, status: 400, err: `field "seeds": number 0.5 is not a whole number`},
		{name: "null", body: strings.NewReader(" null\n"), length: -1, status: 400,
			err: `api: body: null; want a JSON object such as {"query": "heat an egg", "k": 8}`},
		{name: "duplicate key", body: strings.NewReader(`{"query": "egg", "k": 3, "k": 50}`), length: -1, status: 400,
			err: `api: body: json at offset 25: field "k": key given twice`},
		{name: "duplicate in the filter", body: strings.NewReader(`{"query": "egg", "filter": {"deny": ["a*"], "deny": []}}`), length: -1, status: 400,
			err: `field "filter.deny": key given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &service.Request{Method: "POST", Body: tt.body, ContentLength: tt.length}
			if tt.body == nil {
				r.Body = nil
			}
			got, err := readBody(r)
			if errText(err) != tt.err && !(tt.err != "" && strings.Contains(errText(err), tt.err)) {
				t.Fatalf("readBody error %q, want %q", errText(err), tt.err)
			}
			var he *httpError
			if errors.As(err, &he) && he.status != tt.status {
				t.Errorf("status %d, want %d", he.status, tt.status)
			}
			if err == nil && !cmp.Equal(got, tt.want) {
				t.Errorf("readBody = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The answers' own bodies are the bytes encoding/json writes for the same shapes, so a client
// may decode them with anything, and serve's former encoding/json answers stay the same.
func TestBodiesMatchEncodingJSON(t *testing.T) {
	data := testlib.Sample(t)
	h := sampleHandler(t)
	g := h.Engine().Graph()
	maj, mnr := g.Version()
	type artifact struct {
		Format   string          `json:"format"`
		Checksum string          `json:"checksum"`
		Bytes    int             `json:"bytes"`
		Skills   int             `json:"skills"`
		Edges    int             `json:"edges"`
		Terms    int             `json:"terms"`
		Vectors  int             `json:"vectors"`
		Learning engine.Learning `json:"learning"`
	}
	health, _ := json.Marshal(struct {
		Status   string   `json:"status"`
		Version  string   `json:"version"`
		Go       string   `json:"go"`
		Artifact artifact `json:"artifact"`
	}{"ok", "test", runtime.Version(), artifact{
		Format:   fmt.Sprintf("%d.%d", maj, mnr),
		Checksum: fmt.Sprintf("crc32c:%08x", binary.LittleEndian.Uint32(data[12:16])),
		Bytes:    len(data), Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms(), Vectors: g.VectorDim(),
		Learning: engine.LearningOf(g),
	}})
	if string(h.health) != string(health) {
		t.Errorf("health\n%s\nwant\n%s", h.health, health)
	}

	type edge struct {
		Name   string  `json:"name"`
		Type   string  `json:"type"`
		State  string  `json:"state"`
		Weight float32 `json:"weight"`
	}
	type skill struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Source      string `json:"source"`
		Body        string `json:"body"`
		Out         []edge `json:"out"`
		In          []edge `json:"in"`
	}
	for i := range g.NumSkills() {
		want := skill{g.Name(i), g.Description(i), g.Source(i), g.Body(i), []edge{}, []edge{}}
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			want.Out = append(want.Out, edge{g.Name(g.Target(e)), g.Type(e).String(), g.State(e).String(), g.Weight(e)})
		}
		for j := range g.NumSkills() {
			lo, hi := g.Out(j)
			for e := lo; e < hi; e++ {
				if g.Target(e) == i {
					want.In = append(want.In, edge{g.Name(j), g.Type(e).String(), g.State(e).String(), g.Weight(e)})
				}
			}
		}
		wb, _ := json.Marshal(want)
		got, err := h.skill(g.Name(i))
		if err != nil || string(got) != string(wb) {
			t.Fatalf("skill %s: %v\n%s\nwant\n%s", g.Name(i), err, got, wb)
		}
	}
}

// Both forms of the retrieve route answer what `caskg query --json` prints: encoding/json of
// the engine's response.
func TestRetrieveMatchesEngine(t *testing.T) {
	h := sampleHandler(t)
	for _, req := range []engine.Request{
		{Query: "heat some egg", K: 4},
		{Query: "heat some egg", NoGraph: true},
		{Query: "put a cool tomato in the microwave", K: 10, Render: true},
		{Query: "put a cool tomato in the microwave", MinScore: 0.5},
	} {
		resp, err := h.Engine().Query(req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(resp)
		post, _ := json.Marshal(req)
		k := req.K
		if k == 0 {
			k = engine.DefaultK
		}
		get := fmt.Sprintf("/v1/retrieve?q=%s&k=%d&no_graph=%t&render=%t&min_score=%v", strings.ReplaceAll(req.Query, " ", "+"), k, req.NoGraph, req.Render, req.MinScore)
		for _, r := range []*http.Request{
			httptest.NewRequest("POST", "/v1/retrieve", strings.NewReader(string(post))),
			httptest.NewRequest("GET", get, nil),
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 || w.Body.String() != string(want) {
				t.Errorf("%s %s: %d %s\nwant %s", r.Method, r.URL, w.Code, w.Body, want)
			}
		}
	}
}

func TestWriteError(t *testing.T) {
	w := httptest.NewRecorder()
	WriteError(w, http.StatusNotFound, `serve: no file "/<b>&.js"`)
	want := `{"error":"serve: no file \"/\u003cb\u003e\u0026.js\""}`
	if w.Code != 404 || w.Body.String() != want {
		t.Errorf("WriteError: %d %s, want 404 %s", w.Code, w.Body, want)
	}
	for k, v := range map[string]string{"Content-Type": "application/json; charset=utf-8", "Content-Length": fmt.Sprint(len(want)),
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s %q, want %q", k, got, v)
		}
	}
	// encoding/json reads the same message back.
	var v struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || v.Error != `serve: no file "/<b>&.js"` {
		t.Errorf("decoded %q, %v", v.Error, err)
	}
}

// A bug in a route is a 500 with the envelope and the CORS header, and the handler goes on.
func TestPanicIsInternalError(t *testing.T) {
	h := &Handler{} // no engine: retrieve dereferences nil
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/retrieve?q=egg", nil))
	if w.Code != 500 || !strings.HasPrefix(w.Body.String(), `{"error":"api: internal error: runtime error: invalid memory address`) ||
		w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/skills/egg", nil))
	if w.Code != 404 {
		t.Errorf("after the panic: %d %s", w.Code, w.Body)
	}
}

// A request the client abandoned ends the handler as net/http wants, not as a 500.
func TestAbortHandlerPanics(t *testing.T) {
	h := sampleHandler(t)
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", p)
		}
	}()
	h.ServeHTTP(abortWriter{httptest.NewRecorder()}, httptest.NewRequest("GET", "/v1/health", nil))
}

type abortWriter struct{ *httptest.ResponseRecorder }

func (abortWriter) Write([]byte) (int, error) { panic(http.ErrAbortHandler) }

func TestNewBadArtifact(t *testing.T) {
	for _, tt := range testlib.BadArtifacts(testlib.Sample(t)) {
		t.Run(tt.Name, func(t *testing.T) {
			// graphs' error as it is: the host says which artifact.
			if _, err := New(tt.Data, Options{}); !errors.Is(err, tt.Err) || !strings.HasPrefix(err.Error(), "graphs: ") {
				t.Errorf("New = %v, want graphs' %v", err, tt.Err)
			}
		})
	}
}

// The package builds for the edge worker (js/wasm) without the native side or encoding/json,
// which would cost the worker's upload.
func TestDependencies(t *testing.T) {
	deps := testlib.Deps(t, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "github.com/caskg/caskg/wasm/engine")
	for _, p := range testlib.Under(deps, "runtime/cgo", "os/exec", "github.com/caskg/caskg/native", "encoding/json") {
		t.Errorf("package api depends on %s; it must not", p)
	}
}

// TestOrigins holds Options.Origins: the default and "*" answer any origin, a list echoes only
// its own origins (with Vary: Origin), and the status and body never depend on the origin.
func TestOrigins(t *testing.T) {
	data := testlib.Sample(t)
	tests := []struct {
		name    string
		origins []string
		origin  string
		want    string // Access-Control-Allow-Origin
		vary    bool
	}{
		{"default", nil, "https://a.example", "*", false},
		{"default without origin", nil, "", "*", false},
		{"star", []string{"https://b.example", "*"}, "https://a.example", "*", false},
		{"listed", []string{"https://a.example", "http://localhost:3000"}, "http://localhost:3000", "http://localhost:3000", true},
		{"not listed", []string{"https://a.example"}, "https://evil.example", "", true},
		{"none", []string{}, "https://a.example", "", true},
		{"same origin", []string{}, "", "", true},
	}
	base := sampleHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(data, Options{Version: "test", Origins: tt.origins})
			if err != nil {
				t.Fatal(err)
			}
			for _, req := range []struct{ method, target string }{{"GET", "/v1/retrieve?q=heat+some+egg&k=3"}, {"OPTIONS", "/v1/retrieve"}} {
				r := httptest.NewRequest(req.method, req.target, nil)
				if tt.origin != "" {
					r.Header.Set("Origin", tt.origin)
				}
				w, ref := httptest.NewRecorder(), httptest.NewRecorder()
				h.ServeHTTP(w, r)
				base.ServeHTTP(ref, httptest.NewRequest(req.method, req.target, nil))
				if got := w.Header().Get("Access-Control-Allow-Origin"); got != tt.want {
					t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", req.method, got, tt.want)
				}
				if vary := w.Header().Get("Vary") == "Origin"; vary != tt.vary {
					t.Errorf("%s: Vary %q, want Origin %v", req.method, w.Header().Get("Vary"), tt.vary)
				}
				if w.Code != ref.Code || w.Body.String() != ref.Body.String() {
					t.Errorf("%s: %d %s differs from the default's %d %s", req.method, w.Code, w.Body, ref.Code, ref.Body)
				}
			}
		})
	}
}

// TestHealthSource holds Options.Source: the health body names the file after the counts, and
// without it the body is the worker's.
func TestHealthSource(t *testing.T) {
	data := testlib.Sample(t)
	mod := time.Date(2026, 11, 25, 13, 0, 0, 5, time.FixedZone("x", 3600))
	h, err := New(data, Options{Version: "test", Source: &Source{Path: `/a "b"/s.skg`, Modified: mod}})
	if err != nil {
		t.Fatal(err)
	}
	plain := string(sampleHandler(t).health)
	at := strings.Index(plain, `,"learning":`)
	want := plain[:at] + `,"path":"/a \"b\"/s.skg","modified":"2026-11-25T12:00:00.000000005Z"` + plain[at:]
	if string(h.health) != want {
		t.Errorf("health\n%s\nwant\n%s", h.health, want)
	}
}

func TestProperty(t *testing.T) {
	tests := []struct{ name, want string }{
		{"query", `"query": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "d \"q\""}`},
		{"k", `"k": {"type": "integer", "minimum": 1, "maximum": 100, "description": "d \"q\""}`},
		{"deny", `"deny": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 256}, "maxItems": 100, "description": "d \"q\""}`},
	}
	for _, tt := range tests {
		if got := service.Property(tt.name, `d "q"`); got != tt.want {
			t.Errorf("Property(%q) = %s, want %s", tt.name, got, tt.want)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte("{"+service.Property(tt.name, "d")+"}"), &v); err != nil {
			t.Errorf("Property(%q) is not JSON: %v", tt.name, err)
		}
	}
}
