// Command bundlesize measures the edge worker's upload bundle against Cloudflare's limits on a
// Worker's compressed size. make worker runs it on the bundle it has just built:
//
//	go run ./wasm/worker/bundlesize [-json sizes.json] bin/worker
//
// It prints each module's size and the bundle's gzip size, warns above the Workers Free plan's
// limit and fails (exit status 1) above the Paid plan's, and in both cases says which flags of
// caskg build make the artifact, the part of the bundle a user controls, smaller. -json also
// writes the sizes as JSON, from which caskg-sizes (native/lab) writes the figures of the docs pages.
package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Cloudflare's limits on a Worker's size after gzip compression, from Cloudflare's "Workers
// limits" documentation (https://developers.cloudflare.com/workers/platform/limits/#worker-size):
// 3 MB on the Workers Free plan, 10 MB on Workers Paid. Wrangler's refusal names them in MiB
// ("Your Worker exceeded the size limit of 3 MiB"), so they are counted in MiB here.
const (
	FreeLimit = 3 << 20
	PaidLimit = 10 << 20
)

// Modules are the files of the upload, as workerd.capnp and wrangler.toml name them: the entry,
// Go's JS glue, the Go program and artifact.mjs, which names the artifact; and the artifact as
// a data module when it is embedded (make worker WORKER_EMBED=1).
var Modules = []string{"entry.mjs", "wasm_exec.js", "app.wasm", "artifact.mjs", "caskg.skg"}

// Asset is the artifact as a static asset, beside the modules, counted against AssetLimit.
const Asset = "assets/caskg.skg"

// AssetLimit is Cloudflare's limit on one static asset: 25 MiB.
const AssetLimit = 25 << 20

// artifact is the module that holds the artifact; the advice names its share of the bundle.
const artifact = "caskg.skg"

// A Module is one file of the bundle and its sizes.
type Module struct {
	Name      string
	Raw, Gzip int64
}

// Sizes are a bundle's modules and the size Cloudflare counts: one gzip stream over all of them.
type Sizes struct {
	Modules []Module
	Raw     int64
	Gzip    int64
	Asset   int64 // bytes of the artifact as a static asset; 0 when embedded
}

// Measure reads the modules from dir. Gzip is one stream over the modules in turn, at zlib's
// default level, as wrangler measures an upload ("Total Upload: … KiB / gzip: … KiB").
func Measure(dir string) (Sizes, error) {
	var s Sizes
	var all countWriter
	zall, _ := gzip.NewWriterLevel(&all, gzip.DefaultCompression)
	if fi, err := os.Stat(filepath.Join(dir, Asset)); err == nil {
		s.Asset = fi.Size()
	}
	for _, name := range Modules {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if name == artifact && s.Asset > 0 && errors.Is(err, os.ErrNotExist) {
			continue // the artifact is an asset, not a module
		}
		if err != nil {
			return s, errors.New("bundlesize: " + err.Error() + " (make worker builds the bundle)")
		}
		var one countWriter
		z, _ := gzip.NewWriterLevel(&one, gzip.DefaultCompression)
		z.Write(data)
		z.Close()
		zall.Write(data)
		s.Modules = append(s.Modules, Module{Name: name, Raw: int64(len(data)), Gzip: one.n})
		s.Raw += int64(len(data))
	}
	if err := zall.Close(); err != nil {
		return s, errors.New("bundlesize: " + err.Error())
	}
	s.Gzip = all.n
	return s, nil
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// mib formats n bytes in MiB, two decimals.
func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// Check reports on s: the table of modules and the total, then, above FreeLimit, a warning and
// how to shrink the artifact. Above PaidLimit the same text is also the error: Cloudflare would
// refuse the upload on every plan.
func Check(s Sizes) (report string, err error) {
	var b strings.Builder
	for _, m := range s.Modules {
		fmt.Fprintf(&b, "  %-13s %11d bytes %11d gzip\n", m.Name, m.Raw, m.Gzip)
	}
	fmt.Fprintf(&b, "  upload bundle %11d bytes %11d gzip (%s; Cloudflare's limits: %s Free plan, %s Paid plan)\n",
		s.Raw, s.Gzip, mib(s.Gzip), mib(FreeLimit), mib(PaidLimit))
	if s.Asset > 0 {
		fmt.Fprintf(&b, "  static asset  %11d bytes (%s: %s; Cloudflare's limit per asset: %s)\n", s.Asset, Asset, mib(s.Asset), mib(AssetLimit))
	}
	var problem string
	switch {
	case s.Asset > AssetLimit:
		problem = fmt.Sprintf("bundlesize: the artifact is %s, over Cloudflare's limit of %s for one static asset.", mib(s.Asset), mib(AssetLimit))
		b.WriteString(problem + "\n" + shrink(s))
		return b.String(), errors.New(problem)
	case s.Gzip > PaidLimit:
		problem = fmt.Sprintf("bundlesize: the worker bundle is %s gzip, over the Workers Paid plan's limit of %s: Cloudflare refuses the upload on every plan.",
			mib(s.Gzip), mib(PaidLimit))
	case s.Gzip > FreeLimit:
		problem = fmt.Sprintf("warning: the worker bundle is %s gzip, over the Workers Free plan's limit of %s: only the Paid plan (%s) accepts it.",
			mib(s.Gzip), mib(FreeLimit), mib(PaidLimit))
	default:
		return b.String(), nil
	}
	b.WriteString(problem + "\n" + shrink(s))
	if s.Gzip > PaidLimit {
		return b.String(), errors.New(problem)
	}
	return b.String(), nil
}

// shrink is the advice: the artifact's share of the bundle and the caskg build flags that cut it.
func shrink(s Sizes) string {
	var art int64
	for _, m := range s.Modules {
		if m.Name == artifact {
			art = m.Gzip
		}
	}
	return fmt.Sprintf(`  The artifact (%s) is %s gzip of it. To shrink it, rebuild it with caskg build and then
  make worker WORKER_ARTIFACT=that.skg:
    --embedder none     no skill vectors: no semantic seeding (lexical seeds and the graph remain)
    --body-head 600     keep fewer characters of each skill body (default 2400): shorter render text
    --body-head 0       no body text at all: render=1 and /v1/skills give names and descriptions only
`, artifact, mib(art))
}

func main() {
	jsonOut := flag.String("json", "", "also write the sizes as JSON to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bundlesize [-json FILE] DIR  (the worker bundle make worker writes, bin/worker)")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	s, err := Measure(flag.Arg(0))
	if err == nil && *jsonOut != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		// A scratch file of make worker's, beside the bundle: a plain write is enough.
		err = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report, err := Check(s)
	io.WriteString(os.Stdout, report)
	if err != nil {
		os.Exit(1)
	}
}
