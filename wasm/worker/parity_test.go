package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// The worker and `caskg serve` mount the same API; these tests hold them to the same answers.

// answer is what a client sees of a response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// keyHeaders are the headers a client of the API acts on; each must be the same on both hosts.
var keyHeaders = []string{
	"Content-Type", "Content-Length", "Cache-Control", "X-Content-Type-Options", "Allow",
	"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
	"Access-Control-Max-Age",
}

// forServe is c as caskg serve must answer it.
func (c apiCase) forServe() apiCase {
	if c.serve != "" {
		c.want = c.serve
	}
	return c
}

// sameAnswer reports how b differs from a in status, key headers and, with bodies set, body
// bytes and length; "" when alike.
func sameAnswer(a, b answer, bodies bool) string {
	var diff []string
	if a.status != b.status {
		diff = append(diff, "status "+http.StatusText(a.status)+" and "+http.StatusText(b.status))
	}
	for _, k := range keyHeaders {
		if k == "Content-Length" && !bodies {
			continue
		}
		if x, y := a.header.Values(k), b.header.Values(k); strings.Join(x, "\n") != strings.Join(y, "\n") {
			diff = append(diff, k+" "+strings.Join(x, ",")+" and "+strings.Join(y, ","))
		}
	}
	if bodies && !bytes.Equal(a.body, b.body) {
		diff = append(diff, "body\n"+string(a.body)+"\nand\n"+string(b.body))
	}
	return strings.Join(diff, "; ")
}

// startServe serves the sample artifact with native/serve, as `caskg serve` does, on
// 127.0.0.1, reporting the worker's version, and returns its base URL.
func startServe(tb testing.TB) string {
	tb.Helper()
	return startServeArtifact(tb, "")
}

// startServeArtifact is startServe on the artifact file art ("": the sample).
func startServeArtifact(tb testing.TB, art string) string {
	tb.Helper()
	if art == "" {
		art = testlib.SampleFile(tb)
	}
	// The module is only sent, never run, here: any file stands in for it.
	s, err := serve.New(serve.Options{Artifact: art, Playground: "../../playground", JS: "../js", WASM: art, Version: engine.Version})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s)
	tb.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return srv.URL
}

// TestServeParity sends every request of the API's table under its prefix to the worker's
// handler and to `caskg serve`, each behind Go's HTTP server: status, key headers and body
// must be byte for byte the same, and right.
func TestServeParity(t *testing.T) {
	worker, srv := startNative(t), startServe(t)
	n := 0
	for _, c := range apiCases() {
		if !strings.HasPrefix(c.target, api.Prefix) {
			continue // serve answers its static files there
		}
		n++
		t.Run(c.name, func(t *testing.T) {
			var w, s answer
			w.status, w.header, w.body = do(t, worker, c)
			s.status, s.header, s.body = do(t, srv, c)
			checkAnswer(t, c.forServe(), s.status, s.header, s.body)
			if d := sameAnswer(w, s, c.serve == ""); d != "" {
				t.Errorf("%s %s: the worker and serve differ: %s", c.method, c.target, d)
			}
		})
	}
	if n < 30 {
		t.Fatalf("only %d cases under %s", n, api.Prefix)
	}
	// The sample tasks, by GET and POST.
	for _, task := range sampleTasks(t)[:10] {
		for _, c := range retrieveCases(task) {
			var w, s answer
			w.status, w.header, w.body = do(t, worker, c)
			s.status, s.header, s.body = do(t, srv, c)
			if d := sameAnswer(w, s, true); d != "" || w.status != 200 {
				t.Errorf("%s: the worker and serve differ: %s", c.name, d)
			}
		}
	}
}

// jsontextString is s as a JSON string.
func jsontextString(s string) []byte { return jsontext.AppendString(nil, s) }
