package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/embed/embedtest"
	"github.com/caskg/caskg/native/internal/ingest"
)

func parseEmbedFlags(t *testing.T, args ...string) *embedFlags {
	t.Helper()
	var f embedFlags
	var lf llmFlags // owns -cache-dir, shared with the embedder as runBuild shares it
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	lf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	f.cacheDir = lf.cacheDir
	return &f
}

var flagSkills = []ingest.Skill{
	{Name: "boil-water", Description: "Boil water in a kettle."},
	{Name: "brew-tea", Description: "Steep tea in hot water.", Tags: []string{"drinks"}},
	{Name: "slice-bread", Description: "Cut bread with a knife.", Body: "Use the bread knife."},
}

func TestEmbedFlags(t *testing.T) {
	ctx := context.Background()
	e, err := parseEmbedFlags(t).embedder(flagSkills)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*embed.Builtin); !ok || e.Dim() < 1 {
		t.Fatalf("default embedder %T dim %d, want the builtin model", e, e.Dim())
	}
	if e, err := parseEmbedFlags(t, "--embedder", "none").embedder(flagSkills); e != nil || err != nil {
		t.Errorf("none: %v, %v", e, err)
	}

	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		got = append(got, req.Input...)
		var resp struct {
			Data []map[string]any `json:"data"`
		}
		for i := range req.Input {
			resp.Data = append(resp.Data, map[string]any{"index": i, "embedding": []float32{1, float32(i)}})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	dir := t.TempDir()
	h, err := parseEmbedFlags(t, "--embedder", "http", "--embed-url", srv.URL+"/v1", "--embed-model", "m",
		"--embed-batch", "2", "--cache-dir", dir).embedder(flagSkills)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.(*embed.Cache); !ok {
		t.Fatalf("http embedder %T is not cached", h)
	}
	for range 2 {
		if _, err := h.Embed(ctx, []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("the endpoint saw %q, want each text once (cache)", got)
	}
	if h, err := parseEmbedFlags(t, "--embedder", "http", "--embed-url", srv.URL, "--embed-model", "m",
		"--cache-dir", "off").embedder(nil); err != nil {
		t.Fatal(err)
	} else if _, ok := h.(*embed.HTTP); !ok {
		t.Errorf("--cache-dir off gave %T", h)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--embedder", "word2vec"}, `"word2vec" is not builtin, onnx, http or none`},
		{[]string{"--embedder", "onnx"}, "needs --model DIR"},
		{[]string{"--embedder", "http", "--embed-model", "m"}, "needs --embed-url"},
		{[]string{"--embed-threads", "-1"}, "must not be negative"},
	} {
		t.Setenv("OPENAI_BASE_URL", "")
		_, err := parseEmbedFlags(t, tc.args...).embedder(flagSkills)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (!errors.Is(err, errUsage) && tc.want != "") {
			t.Errorf("%v: err = %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestEmbedFlagsONNX(t *testing.T) {
	if _, err := embed.ResolveLibrary(""); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := embedtest.New(16, 32, 3).WriteDir(dir, 32); err != nil {
		t.Fatal(err)
	}
	e, err := parseEmbedFlags(t, "--embedder", "onnx", "--model", dir, "--embed-threads", "1",
		"--cache-dir", t.TempDir()).embedder(nil)
	if err != nil {
		if strings.Contains(err.Error(), "without cgo") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer e.(io.Closer).Close()
	vecs, err := e.Embed(context.Background(), []string{"heat the egg"})
	if err != nil || len(vecs) != 1 || len(vecs[0]) != 16 {
		t.Fatalf("Embed = %v, %v", vecs, err)
	}
}
