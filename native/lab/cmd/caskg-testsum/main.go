// Command caskg-testsum reads the events of `go test -json` on standard input, prints what a
// plain `go test` prints (each package's result line; the whole output of a test that fails,
// and of a package that fails or does not build), and writes the count of skipped tests and
// their reasons, grouped, to the file of -o (make test prints it last, after the fuzz runs).
// It exits 1 when a test, a package or a build failed, or when no package reported a result, so
// a pipeline into it fails as go test does:
//
//	go test -json ./... | caskg-testsum -o bin/test-skips.txt
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/caskg/caskg/native/internal/atomicfile"
)

func main() {
	out := flag.String("o", "", "write the skip summary to this file (default: standard output only)")
	flag.Parse()
	s, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caskg-testsum:", err)
		os.Exit(1)
	}
	text := s.skipReport()
	if *out != "" {
		if err := atomicfile.Write(*out, []byte(text)); err != nil {
			fmt.Fprintln(os.Stderr, "caskg-testsum:", err)
			os.Exit(1)
		}
	} else {
		io.WriteString(os.Stdout, text)
	}
	if s.failed || s.results == 0 {
		if s.results == 0 {
			fmt.Fprintln(os.Stderr, "caskg-testsum: no package reported a result")
		}
		os.Exit(1)
	}
}
