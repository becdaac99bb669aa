package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// countingEmbedder embeds a text as its length and first byte, counting the texts it saw.
type countingEmbedder struct {
	seen []string
	fail bool
}

func (c *countingEmbedder) ID() string { return "counting-v1" }
func (c *countingEmbedder) Dim() int   { return 2 }
func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.fail {
		return nil, errors.New("boom")
	}
	c.seen = append(c.seen, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := []float32{float32(len(t)), 1}
		if t != "" {
			v[1] = float32(t[0])
		}
		normalize(v)
		out[i] = v
	}
	return out, nil
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	inner := &countingEmbedder{}
	c, err := Cached(inner, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.Embed(ctx, []string{"a", "bb", "a", ""})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner.seen, []string{"a", "bb", ""}) {
		t.Errorf("embedded %q, want each distinct text once", inner.seen)
	}
	inner.seen = nil
	second, err := c.Embed(ctx, []string{"", "bb", "ccc", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner.seen, []string{"ccc"}) {
		t.Errorf("second call embedded %q, want only the new text", inner.seen)
	}
	if !slices.Equal(second[1], first[1]) || !slices.Equal(second[0], first[3]) || !slices.Equal(second[3], first[0]) {
		t.Error("cached vectors differ from the first answers")
	}
	if h, m := c.Stats(); h != 3 || m != 4 {
		t.Errorf("stats %d hits, %d misses; want 3, 4", h, m)
	}
	// No temporary files are left behind; every entry is a whole file.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(filepath.Base(p), ".tmp") {
			t.Errorf("temporary file %s left", p)
		}
		return nil
	})

	// A corrupt or truncated entry is a miss and is rewritten.
	p := c.path("bb")
	if err := os.WriteFile(p, []byte("cev1\x02\x00\x00\x00short"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner.seen = nil
	again, err := c.Embed(ctx, []string{"bb"})
	if err != nil || !slices.Equal(inner.seen, []string{"bb"}) || !slices.Equal(again[0], first[1]) {
		t.Errorf("corrupt entry: %v, embedded %q", err, inner.seen)
	}

	// Another model id never reads these entries.
	other, err := Cached(&renamed{inner, "counting-v2"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	inner.seen = nil
	if _, err := other.Embed(ctx, []string{"a"}); err != nil || len(inner.seen) != 1 {
		t.Errorf("other model: %v, embedded %q", err, inner.seen)
	}

	inner.fail = true
	if _, err := c.Embed(ctx, []string{"new"}); err == nil {
		t.Error("an embedder error was swallowed")
	}
	if _, err := c.Embed(ctx, []string{"a"}); err != nil {
		t.Errorf("a fully cached call reached the failing embedder: %v", err)
	}
}

type renamed struct {
	Embedder
	id string
}

func (r *renamed) ID() string { return r.id }
