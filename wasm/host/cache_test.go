package host_test

import (
	"context"
	"os"
	"testing"

	"github.com/caskg/caskg/wasm/host"
)

// TestCompilationCacheDir: a Module keeps its compiled code in Options.CacheDir, where the next
// process finds it, and in no directory with NoCache.
func TestCompilationCacheDir(t *testing.T) {
	ctx := context.Background()
	wasm := wasmBytes(t)
	tests := []struct {
		name      string
		noCache   bool
		wantFiles bool
	}{
		{"cache dir", false, true},
		{"no cache", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			m, err := host.Compile(ctx, wasm, &host.Options{CacheDir: dir, NoCache: tt.noCache})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Close(ctx); err != nil {
				t.Fatal(err)
			}
			files := 0
			for range walk(t, dir) {
				files++
			}
			if got := files > 0; got != tt.wantFiles {
				t.Errorf("%d files in the cache directory; want some: %v", files, tt.wantFiles)
			}
			if !tt.wantFiles {
				return
			}
			// A second Module from the same directory loads and answers.
			p, err := host.Load(ctx, wasm, need(t, sampleFixture, "").artifact, &host.Options{CacheDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			if _, err := p.QueryJSON(ctx, []byte(`{"query":"boil water"}`)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// walk lists the regular files under dir.
func walk(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := dir + "/" + e.Name()
		if e.IsDir() {
			out = append(out, walk(t, p)...)
		} else {
			out = append(out, p)
		}
	}
	return out
}
