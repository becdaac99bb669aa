package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// The adapter's logic runs natively here; wasm/host runs it as WebAssembly.

func sampleArtifact(t *testing.T) []byte {
	t.Helper()
	data, err := testlib.BuildPlain("../../graphs/sample", 0)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReactor(t *testing.T) {
	data := sampleArtifact(t)
	r := newReactor()
	if _, out := r.load([]byte("# notes")); string(out) != `{"error":"graphs: not a caskg artifact"}` {
		t.Errorf("load(text) = %s", out)
	}
	h, out := r.load(data)
	if out != nil || h == 0 {
		t.Fatalf("load = %d, %s", h, out)
	}
	g, _ := graphs.Decode(data)
	want, _ := engine.New(g).Query(engine.Request{Query: "heat some egg", K: 4})
	wantJSON, _ := json.Marshal(want)
	if got := r.query(h, []byte(`{"query":"heat some egg","k":4}`), nil); string(got) != string(wantJSON) {
		t.Errorf("query:\n got %s\nwant %s", got, wantJSON)
	}
	for _, tt := range []struct{ req, want string }{
		{`{"query":""}`, `{"error":"engine: empty query"}`},
		{`{"query":"egg","K":3}`, `{"error":"reactor: request: json at offset 15: field \"K\": unknown field"}`},
		{``, `{"error":"reactor: request: json at offset 0: want an object, got the end of the input"}`},
		// The filter passes through as JSON to the engine, which judges it.
		{`{"query":"egg","filter":{"allow":["a["]}}`, `{"error":"engine: field \"filter.allow[0]\": '[', ']' and '\\' are reserved; a pattern has '*' (any run of characters) and '?' (one character)"}`},
		{`{"query":"egg","filter":{"tags":["x"]}}`, `{"error":"reactor: request: json at offset 25: field \"filter.tags\": unknown field"}`},
	} {
		if got := r.query(h, []byte(tt.req), nil); string(got) != tt.want {
			t.Errorf("query(%s) = %s, want %s", tt.req, got, tt.want)
		}
	}
	if got := r.query(h, []byte(`{"query":"heat some egg","k":1,"filter":{"allow":["*-object-*"],"deny":["heat-*"]}}`), nil); !strings.HasPrefix(string(got), `{"results":[{"name":"verify-object-hot",`) {
		t.Errorf("query with a filter = %s, want verify-object-hot first (heat-object-in-microwave denied)", got)
	}

	var info struct {
		Skills, Edges, Terms, Bytes int
		Format                      string
		Params                      map[string]any
	}
	if err := json.Unmarshal(r.info(h), &info); err != nil {
		t.Fatalf("info: %v: %s", err, r.info(h))
	}
	if info.Skills != g.NumSkills() || info.Edges != g.NumEdges() || info.Terms != g.NumTerms() ||
		info.Bytes != len(data) || !strings.Contains(info.Format, ".") || len(info.Params) == 0 {
		t.Errorf("info = %+v", info)
	}

	h2, _ := r.load(data)
	if h2 == h {
		t.Errorf("second load reused handle %d", h)
	}
	if !r.unload(h) || r.unload(h) {
		t.Error("unload does not report whether the handle existed")
	}
	if got := string(r.query(h, []byte(`{"query":"egg"}`), nil)); got != `{"error":"reactor: no artifact loaded as handle 1"}` {
		t.Errorf("query after unload = %s", got)
	}
	if got := r.info(h); !strings.Contains(string(got), "no artifact loaded") {
		t.Errorf("info after unload = %s", got)
	}
	if got := string(r.query(h2, []byte(`{"query":"egg","k":1}`), nil)); !strings.HasPrefix(got, `{"results":[{"name":`) {
		t.Errorf("query on the second handle = %s", got)
	}
}

func TestGuard(t *testing.T) {
	for _, v := range []any{"boom", errors.ErrUnsupported, 42} {
		out := func() (out []byte) {
			defer guard(&out)
			panic(v)
		}()
		var e struct{ Error string }
		if err := json.Unmarshal(out, &e); err != nil || !strings.HasPrefix(e.Error, "reactor: internal error: ") {
			t.Errorf("panic(%v) became %s", v, out)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var v struct{ Version, Format, Go string }
	if err := json.Unmarshal(versionJSON(), &v); err != nil || v.Version != engine.Version || v.Format == "" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("version = %s (%v)", versionJSON(), err)
	}
}
