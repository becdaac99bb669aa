// Command caskg-sizes writes the size figures of the docs pages and docs/benchmarks.md (the Makefile's
// SIZE_DOCS) from the build, so that the prose cannot drift from what ships. A figure is a number between
// <!-- size:NAME --> and <!-- /size --> (native/lab/internal/mdspan); each job below writes its own
// names and leaves the others:
//
//	caskg-sizes module bin/caskg.wasm FILE.md...       make wasm: module-raw, module-gzip, module-budget, go
//	caskg-sizes worker SIZES.json FILE.md...           make worker on the sample: worker-*, go
//	caskg-sizes library ARTIFACT SIZES.json FILE.md... make bench-worker on the 859 skills: library-*
//
// SIZES.json is what go run ./wasm/worker/bundlesize -json writes. The test of this package
// builds the module and the sample's worker bundle as make does and fails when a figure of the
// first two jobs disagrees with them; the library figures need the 859-skill build and are
// written by make bench-worker only.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/wasm/modbuild"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "caskg-sizes:", err)
		os.Exit(1)
	}
}

const usage = "usage: caskg-sizes module WASM FILE.md... | worker SIZES.json FILE.md... | library ARTIFACT SIZES.json FILE.md..."

func run(args []string) error {
	if len(args) < 3 {
		return errors.New(usage)
	}
	var figs map[string]string
	var docs []string
	var err error
	switch args[0] {
	case "module":
		figs, err = moduleFile(args[1])
		docs = args[2:]
	case "worker":
		figs, err = workerFigures(args[1])
		docs = args[2:]
	case "library":
		if len(args) < 4 {
			return errors.New(usage)
		}
		figs, err = libraryFiles(args[1], args[2])
		docs = args[3:]
	default:
		return errors.New(usage)
	}
	if err != nil {
		return err
	}
	for _, n := range slices.Sorted(maps.Keys(figs)) {
		fmt.Printf("  %-20s %s\n", n, figs[n])
	}
	for _, d := range docs {
		if err := mdspan.UpdateFigures(d, figs); err != nil {
			return err
		}
	}
	return nil
}

// The figures a job writes: checkedNames are compared with the build by the test,
// libraryNames come from the 859-skill build (make bench-worker) and only written.
var (
	checkedNames = []string{"go", "module-raw", "module-gzip", "module-budget",
		"worker-upload-gzip", "worker-upload-mib", "worker-app-raw", "worker-app-gzip", "worker-js-gzip"}
	libraryNames = []string{"library-artifact-mb", "library-artifact-mib", "library-embed-gzip", "library-embed-mib"}
)

// moduleFigures are the module's sizes, counted as wasm/modbuild's TestModuleSize counts them.
func moduleFigures(wasm []byte) map[string]string {
	return map[string]string{
		"go":            runtime.Version(),
		"module-raw":    mdspan.Count(len(wasm)),
		"module-gzip":   mdspan.Count(modbuild.Gzip(wasm)),
		"module-budget": strconv.Itoa(modbuild.MaxGzip/1000) + " KB",
	}
}

func moduleFile(path string) (map[string]string, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(string(wasm), "\x00asm") {
		return nil, errors.New(path + ": not a WebAssembly module")
	}
	return moduleFigures(wasm), nil
}

// bundle is the JSON of bundlesize -json.
type bundle struct {
	Modules []struct {
		Name      string
		Raw, Gzip int64
	}
	Raw, Gzip, Asset int64
}

func readBundle(path string) (bundle, error) {
	var s bundle
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w (go run ./wasm/worker/bundlesize -json writes it)", path, err)
	}
	return s, nil
}

// workerFigures are the upload's sizes from the bundle file of bundlesize -json: the Go
// program, its JS and the one gzip stream Cloudflare counts, without the artifact (a static
// asset), so the same for any library.
func workerFigures(sizes string) (map[string]string, error) {
	s, err := readBundle(sizes)
	if err != nil {
		return nil, err
	}
	if s.Asset == 0 {
		return nil, errors.New("the worker figures are of a bundle with the artifact as a static asset, not embedded (make worker without WORKER_EMBED)")
	}
	figs := map[string]string{
		"go":                 runtime.Version(),
		"worker-upload-gzip": mdspan.Count(int(s.Gzip)),
		"worker-upload-mib":  mib(s.Gzip),
	}
	var js int64
	for _, m := range s.Modules {
		switch m.Name {
		case "app.wasm":
			figs["worker-app-raw"], figs["worker-app-gzip"] = mdspan.Count(int(m.Raw)), mdspan.Count(int(m.Gzip))
		default:
			js += m.Gzip
		}
	}
	if figs["worker-app-raw"] == "" {
		return nil, errors.New("the bundle has no app.wasm")
	}
	figs["worker-js-gzip"] = mdspan.Count(int(js))
	return figs, nil
}

// libraryFiles are the 859-skill library's figures: its artifact, and the upload that embeds it
// (make worker WORKER_EMBED=1).
func libraryFiles(artifact, embedSizes string) (map[string]string, error) {
	fi, err := os.Stat(artifact)
	if err != nil {
		return nil, err
	}
	s, err := readBundle(embedSizes)
	if err != nil {
		return nil, err
	}
	if s.Asset != 0 {
		return nil, errors.New(embedSizes + ": the bundle has the artifact as an asset; the library figures want it embedded (WORKER_EMBED=1)")
	}
	return map[string]string{
		"library-artifact-mb":  fmt.Sprintf("%.2f MB", float64(fi.Size())/1e6),
		"library-artifact-mib": mib(fi.Size()),
		"library-embed-gzip":   mdspan.Count(int(s.Gzip)),
		"library-embed-mib":    mib(s.Gzip),
	}, nil
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
