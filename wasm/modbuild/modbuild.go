// Package modbuild builds the WASI reactor (wasm/reactor) as make wasm does, for the tests that
// load the module through wazero, Node or Chromium, so that they test the module that ships.
//
// For a Go program: it is public because tests across wasm/, native/ and playground/ build the
// module; Build is `make wasm`, Gzip the size a CDN serves, MaxGzip the module's budget.
package modbuild

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
)

// MaxGzip is the bar of the module's size: 740 KB gzipped at the highest level (docs/rationale.md
// says why it moved from 700 KB). TestModuleSize holds the module to it and docs/wasm-npm.md
// states it (make wasm writes the figure).
const MaxGzip = 740_000

// Gzip is the module's gzipped size as the budget and the docs count it: Go's compress/gzip
// at level 9, about 1.4% more bytes than the gzip command's -9 and deterministic for one Go
// release, so that a test can compare the docs' figures with the build.
func Gzip(module []byte) int {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(module)
	w.Close()
	return z.Len()
}

// Experiment is the GOEXPERIMENT the module is built with. The reactor runs on one thread, where
// Go 1.26's default Green Tea collector, designed for many cores, gains nothing and costs 14 KB
// of the gzipped module; nogreenteagc selects the classic collector. Toolchains that no longer
// offer the experiment build with their default (see Env).
const Experiment = "nogreenteagc"

// Flags are the build flags after "go build": the size flags of make wasm.
var Flags = []string{"-trimpath", "-ldflags=-s -w -buildid=", "-buildmode=c-shared"}

// Env returns the environment for building the module: the process's own with GOOS=wasip1,
// GOARCH=wasm, no cgo, and GOEXPERIMENT=Experiment when the go command accepts it.
func Env() []string {
	env := append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	probe := exec.Command("go", "env", "GOEXPERIMENT")
	probe.Env = append(env, "GOEXPERIMENT="+Experiment)
	if probe.Run() == nil {
		env = append(env, "GOEXPERIMENT="+Experiment)
	}
	return env
}

// Build builds github.com/caskg/caskg/wasm/reactor into the file out.
func Build(out string) error {
	args := append([]string{"build"}, Flags...)
	cmd := exec.Command("go", append(args, "-o", out, "github.com/caskg/caskg/wasm/reactor")...)
	cmd.Env = Env()
	if b, err := cmd.CombinedOutput(); err != nil {
		return errors.New("modbuild: building the module: " + err.Error() + "\n" + string(b))
	}
	return nil
}
