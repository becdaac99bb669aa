package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/caskg/caskg/wasm/host"
	"github.com/caskg/caskg/wasm/modbuild"
)

// wasmPath is the module TestMain builds from wasm/reactor, as `make wasm` does.
var wasmPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "caskg-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wasmPath = filepath.Join(dir, "caskg.wasm")
	if err := modbuild.Build(wasmPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if cache != nil {
		cache.Close(context.Background())
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// cache shares compiled code between the tests' modules: wazero compiles the module once per
// test binary.
var (
	cache     wazero.CompilationCache
	cacheOnce sync.Once
)

func wasmBytes(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(wasmPath)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// sharedCache returns the compilation cache of the test binary. It keeps compiled code in the
// user's cache directory, so that later runs, fuzzing workers and race-instrumented builds
// (which compile many times slower) find it; without that directory it is in memory only.
func sharedCache() wazero.CompilationCache {
	cacheOnce.Do(func() {
		if dir := host.DefaultCacheDir(); dir != "" {
			if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
				cache = c
				return
			}
		}
		cache = wazero.NewCompilationCache()
	})
	return cache
}

// compile compiles the test module with the shared cache and the given options.
func compile(tb testing.TB, opts host.Options) *host.Module {
	tb.Helper()
	opts.Cache = sharedCache()
	m, err := host.Compile(context.Background(), wasmBytes(tb), &opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// load loads artifact into the test module compiled with opts (see compile); the pool is
// closed when the test ends.
func load(tb testing.TB, opts host.Options, artifact []byte) *host.Pool {
	tb.Helper()
	p, err := compile(tb, opts).Load(context.Background(), artifact)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close(context.Background()) })
	return p
}
