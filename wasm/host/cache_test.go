package host_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/caskg/caskg/wasm/host"
)

// TestCompilationCacheDir: a Module keeps its compiled code in Options.CacheDir, where the next
// process finds it, and in no directory with NoCache.
func TestCompilationCacheDir(t *testing.T) {
	ctx := context.Background()
	wasm := wasmBytes(t)
	for _, noCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("no cache %v", noCache), func(t *testing.T) {
			dir := t.TempDir()
			m, err := host.Compile(ctx, wasm, &host.Options{CacheDir: dir, NoCache: noCache})
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
			if got := files > 0; got == noCache {
				t.Errorf("%d files in the cache directory; want some: %v", files, !noCache)
			}
			if noCache {
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
