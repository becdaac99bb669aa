package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/lab/internal/verboseapi"
)

// verboseSynopsis is what verboseapi takes.
const verboseSynopsis = "TOOLS.json TASKS.jsonl -o DIR [--seed N] [--tools N] [--parts N --part I] [--short] [--sample-field]"

// runVerbose is caskg-lab verboseapi: it writes DIR/tools.json and DIR/tasks.jsonl, a catalog in
// the verbose REST-API shape made from a dev catalog (native/lab/internal/verboseapi).
func runVerbose(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("verboseapi", flag.ContinueOnError)
	var opt verboseapi.Options
	var dir string
	fs.Uint64Var(&opt.Seed, "seed", 1, "picks the APIs and how the needs are joined")
	fs.IntVar(&opt.Tools, "tools", 460, "about how many tools the catalog holds")
	fs.IntVar(&opt.Parts, "parts", 1, "split the APIs into this many parts by a hash of their names")
	fs.IntVar(&opt.Part, "part", 0, "with -parts: the part to keep")
	fs.BoolVar(&opt.Short, "short", false, "operationId-style names and one short need a query")
	fs.BoolVar(&opt.SampleField, "sample-field", false, "put the result sample in x-response-sample, not the description")
	fs.StringVar(&dir, "o", "", "output `directory` — required")
	files, err := cmdline.Parse(stdout, "caskg-lab", fs, args, verboseSynopsis)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return cmdline.Usagef("verboseapi needs TOOLS.json and TASKS.jsonl (got %d arguments)", len(files))
	}
	if dir == "" {
		return cmdline.Usagef("flag -o is required")
	}
	tools, tasks, err := verboseapi.Read(files[0], files[1])
	if err != nil {
		return err
	}
	out, err := verboseapi.Generate(tools, tasks, opt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("verboseapi: %w", err)
	}
	tj, _ := json.MarshalIndent(map[string]any{"tools": out.Tools}, "", " ")
	var tb bytes.Buffer
	for _, t := range out.Tasks {
		b, _ := json.Marshal(t)
		tb.Write(b)
		tb.WriteByte('\n')
	}
	if err := atomicfile.Write(filepath.Join(dir, "tools.json"), append(tj, '\n')); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "tasks.jsonl"), tb.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verboseapi: %d tools of %d APIs, %d tasks in %s\n", len(out.Tools), out.APIs, len(out.Tasks), dir)
	return nil
}
