package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// TestMemoryParity: over HTTP, the worker and caskg serve answer a task the memory of past
// tasks raises with the same bytes, carrying its evidence (the recalled field, the rendered
// recalled line), and none of it with no_memory.
func TestMemoryParity(t *testing.T) {
	s, err := newServer(testlib.SampleMemory(t), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewServer(s)
	t.Cleanup(w.Close)
	srv := startServeArtifact(t, testlib.SampleMemoryFile(t))
	q := testlib.MemoryQuery
	tests := []struct {
		name     string
		req      engine.Request
		recalled bool
	}{
		{"results", engine.Request{Query: q}, true},
		{"rendered", engine.Request{Query: q, Render: true}, true},
		{"results, no_memory", engine.Request{Query: q, NoMemory: true}, false},
		{"rendered, no_memory", engine.Request{Query: q, Render: true, NoMemory: true}, false},
	}
	for _, tt := range tests {
		body, _ := json.Marshal(tt.req)
		c := apiCase{name: tt.name, method: "POST", target: "/v1/retrieve", body: string(body), status: 200}
		var a, b answer
		a.status, a.header, a.body = do(t, w.URL, c)
		b.status, b.header, b.body = do(t, srv, c)
		if d := sameAnswer(a, b, true); d != "" || a.status != 200 {
			t.Errorf("%s: the worker and serve differ: %s", tt.name, d)
			continue
		}
		var resp engine.Response
		if err := json.Unmarshal(a.body, &resp); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range resp.Results {
			if r.Recalled != nil {
				n++
				if tt.req.Render && !strings.Contains(resp.Rendered, "\n- "+r.Recalled.Evidence()+"\n") {
					t.Errorf("%s: %s's recalled line is not in the rendered text:\n%s", tt.name, r.Name, resp.Rendered)
				}
			}
		}
		if (n > 0) != tt.recalled || strings.Contains(string(a.body), "recalled") != tt.recalled {
			t.Errorf("%s: %d results recalled, want some: %v: %s", tt.name, n, tt.recalled, a.body)
		}
	}
}
