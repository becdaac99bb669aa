package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeBadInput(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../..")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"two artifacts", []string{"serve", art, art}, 2, "want at most one ARTIFACT, got 2"},
		{"missing artifact", []string{"serve", "--root", root, filepath.Join(t.TempDir(), "none.skg")}, 1, "serve: artifact: open"},
		{"not an artifact", []string{"serve", "--root", root, sampleTasks}, 1, "not a caskg artifact"},
		{"no module", []string{"serve", "--root", root, "--wasm", filepath.Join(t.TempDir(), "caskg.wasm"), art}, 1, "run 'make wasm'"},
		{"bad tasks", []string{"serve", "--root", root, "--tasks", art, "--wasm", art, art}, 1, "serve: tasks:"},
		{"bad address", []string{"serve", "--root", root, "--wasm", art, "--addr", "127.0.0.1:-1", art}, 1, "127.0.0.1:-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
		})
	}
}

// TestServe starts caskg serve on a free port of 127.0.0.1, asks it for the page, the module and
// an answer, and stops it as Ctrl-C would.
func TestServe(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../..")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan string, 1)
	oldCtx, oldReady := serveContext, serveReady
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	serveReady = func(addr string) { addrs <- addr }
	defer func() { serveContext, serveReady = oldCtx, oldReady }()

	done := make(chan result, 1)
	// The module is only sent, never run, here: any file stands in for it.
	go func() { done <- run(t, "serve", art, "--root", root, "--wasm", art, "--addr", "127.0.0.1:0") }()
	var base string
	select {
	case addr := <-addrs:
		base = "http://" + addr
	case r := <-done:
		t.Fatalf("serve ended at once: exit %d, %s", r.code, r.stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen within 30 s")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct{ path, want string }{
		{"/", "<title>caskg playground"},
		{"/caskg.js", "export class Caskg"},
		{"/v1/retrieve?q=heat+some+egg&k=2", `{"results":[{"name":"heat-object-in-microwave"`},
		{"/tasks.json", ""}, // no tasks without the default artifact: a 404 with an error
	} {
		resp, err := client.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if c.want == "" {
			if resp.StatusCode != 404 {
				t.Errorf("%s: status %d, want 404", c.path, resp.StatusCode)
			}
			continue
		}
		if resp.StatusCode != 200 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: status %d, body %.120q; want %q", c.path, resp.StatusCode, b, c.want)
		}
	}
	cancel()
	select {
	case r := <-done:
		if r.code != 0 || r.stdout != "playground: "+base+"/\n" || !strings.Contains(r.stderr, "caskg serve: stopped") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of the interrupt")
	}
}
