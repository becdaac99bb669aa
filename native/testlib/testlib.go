// Package testlib holds what the tests of the engine's hosts share (the /v1 API, the edge
// worker, the WASI reactor, the wazero host, caskg serve, the playground): artifacts built from
// a library folder as `caskg build` builds them by default, the bad artifacts every host must
// refuse, and the packages a build links, for the tests that hold a host to its dependencies.
// It is for tests only: it imports the native builder, which no host may link. Its package
// fixture (files, sample paths, checks) links no builder, for the tests of the packages the
// builder imports; its package strictjson, standard library only, serves the tests of graphs.
package testlib

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
)

// root is the module's root folder as reached from the working directory (a test's is its
// package's folder): "." or a chain of "..", the nearest that holds go.mod. Relative, so that
// the skills' sources recorded in an artifact are the same on every machine.
func root() (string, error) {
	abs, err := filepath.Abs(".")
	if err != nil {
		return "", errors.New("testlib: " + err.Error())
	}
	for dir := "."; ; dir = filepath.Join(dir, "..") {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if up := filepath.Dir(abs); up != abs {
			abs = up
		} else {
			return "", errors.New("testlib: no go.mod in the working directory or above it")
		}
	}
}

// build is the artifact `caskg build dir` writes: default options, with the builtin semantic
// model learnt from the library's skills.
func build(dir string) ([]byte, error) {
	lib, err := ingest.Load(dir)
	if err != nil {
		return nil, err
	}
	res, err := builder.Build(context.Background(), builder.Input{Skills: lib.Skills})
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
}

// Build returns the artifact `caskg build dir` writes (default options, the builtin semantic
// model learnt from the library).
func Build(tb testing.TB, dir string) []byte {
	tb.Helper()
	data, err := build(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Graph builds in and decodes the artifact, for tests that read the graph a build makes.
func Graph(tb testing.TB, in builder.Input) *graphs.Graph {
	tb.Helper()
	res, err := builder.Build(context.Background(), in)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := graphs.Decode(res.Artifact)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// library builds the library in the folder rel of the repository as `caskg build` does, once
// per test binary: callers share the artifact and must not modify it.
func library(rel ...string) func() ([]byte, error) {
	return sync.OnceValues(func() ([]byte, error) {
		r, err := root()
		if err != nil {
			return nil, err
		}
		return build(filepath.Join(append([]string{r}, rel...)...))
	})
}

var (
	sample       = library("graphs", "sample")
	multilingual = library("native", "testlib", "multilingual")
)

// Sample returns the artifact of the sample library graphs/sample as `caskg build graphs/sample`
// writes it, built once per test binary: callers share it and must not modify it.
func Sample(tb testing.TB) []byte { return artifact(tb, sample) }

// Multilingual returns the artifact of the project's own multilingual library
// native/testlib/multilingual (a dozen skills written in Chinese, Japanese, Korean and
// English: weather forecasts, currency exchange, translation, PDF tables), built once per test
// binary: callers share it and must not modify it.
func Multilingual(tb testing.TB) []byte { return artifact(tb, multilingual) }

func artifact(tb testing.TB, lib func() ([]byte, error)) []byte {
	tb.Helper()
	data, err := lib()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// SampleFile writes Sample to a file of the test's own, for what takes an artifact's path (caskg
// serve), and returns the path.
func SampleFile(tb testing.TB) string {
	tb.Helper()
	return tempFile(tb, "sample.skg", Sample(tb))
}

// tempFile writes data to a file name in a folder of the test's own and returns its path.
func tempFile(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// A BadArtifact is bytes that are no valid artifact, and the error of package graphs that a
// host must refuse them with.
type BadArtifact struct {
	Name string
	Data []byte
	Err  error
}

// BadArtifacts returns what every host must refuse to load, made from the valid artifact good
// (which it leaves as it is): no bytes, a text file, good cut in half, good with a byte flipped.
func BadArtifacts(good []byte) []BadArtifact {
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	return []BadArtifact{
		{"empty", nil, graphs.ErrNotArtifact},
		{"text", []byte("# notes\n"), graphs.ErrNotArtifact},
		{"truncated", good[:len(good)/2], graphs.ErrTruncated},
		{"flipped byte", flipped, graphs.ErrChecksum},
	}
}
