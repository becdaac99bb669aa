// Package cli implements the caskg command: build, query, inspect, export, eval, mcp, traces and
// serve. Run is the whole program behind main, so tests drive it in-process with their own
// streams.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/wasm/engine"
)

type command struct {
	name, args, summary string
	run                 func(c *ctx, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"build", "LIBRARY... -o OUT.skg", "build a skill graph artifact from SKILL.md trees and tool catalogs", runBuild},
		{"update", updateArgs, "make the next artifact from an old one, its build state and new runs, without a full build", runUpdate},
		{"query", "ARTIFACT \"task\" | --batch TASKS.jsonl", "retrieve a ranked skill bundle for a task", runQuery},
		{"inspect", "ARTIFACT", "show an artifact's counts, degree statistics and sections; --learned: its edges learned from use", runInspect},
		{"export", "ARTIFACT --format json|dot|graphml", "write the published graph in an interchange format", runExport},
		{"eval", "ARTIFACT --tasks TASKS.jsonl", "score retrieval (R@k, COMP@k, nDCG@10) and edges against gold", runEval},
		{"mcp", "ARTIFACT [--library DIR] [--feedback FILE] [--http ADDR]", "serve the graph to agents over MCP on stdio or streamable HTTP (retrieve_skills, get_skill, ...)", runMCP},
		{"traces", "import " + tracesImportArgs, "turn agent logs (Claude Code, OpenAI, MCP) into traces for build --traces", runTraces},
		{"gateway", gatewayArgs, "one MCP endpoint in front of many MCP servers, whose tool graph learns from the calls it proxies", runGateway},
		{"serve", "[ARTIFACT] [--addr 127.0.0.1:8080] [--cors-origins LIST] [--root DIR] [--feedback FILE]", "serve the browser playground, the WebAssembly module and the retrieval API", runServe},
	}
}

// ctx carries the output streams of one run. json is set when the command line asks for JSON
// (--json): then errors, usage errors included, are JSON on stderr too.
type ctx struct {
	stdout, stderr io.Writer
	json           bool
}

// errUsage marks an error that the usage text should follow.
var errUsage = cmdline.ErrUsage

// Run runs the command line args (without the program name) and returns the exit status: 0 on
// success, 1 on a failure, 2 on a usage error.
func Run(args []string, stdout, stderr io.Writer) int {
	c := &ctx{stdout: stdout, stderr: stderr, json: wantsJSON(args)}
	if len(args) == 0 {
		return c.fail(nil, usagef("no command given"))
	}
	switch args[0] {
	case "-h", "--help", "help":
		c.usage(stdout)
		return 0
	case "version", "--version":
		fmt.Fprintln(stdout, "caskg", engine.Version)
		return 0
	}
	for i := range commands {
		if cmd := &commands[i]; cmd.name == args[0] {
			err := cmd.run(c, args[1:])
			if err == nil || errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return c.fail(cmd, err)
		}
	}
	names := []string{"help", "version"}
	for _, cmd := range commands {
		names = append(names, cmd.name)
	}
	return c.fail(nil, usagef("unknown command %q%s", args[0], cmdline.DidYouMean(args[0], names, "")))
}

// wantsJSON reports whether a command line asks for JSON output: --json before any "--".
func wantsJSON(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true":
			return true
		}
	}
	return false
}

// fail reports err of cmd (nil: of no command yet) on stderr and returns the exit status. A
// usage error is followed by the usage: the command's synopsis, or the list of commands. With
// --json the report is one JSON object, {"error": "...", "usage": "..."}.
func (c *ctx) fail(cmd *command, err error) int {
	prefix, synopsis := "caskg", "caskg COMMAND [flags]; 'caskg help' lists the commands"
	if cmd != nil {
		prefix, synopsis = "caskg "+cmd.name, "caskg "+cmd.name+" "+cmd.args
	}
	usage := errors.Is(err, errUsage)
	text := cmdline.Message(err)
	if cmd != nil {
		// The package behind a command may be its namesake (serve, gateway, eval): its own
		// prefix would say the command's name twice.
		text = strings.TrimPrefix(text, cmd.name+": ")
	}
	msg := prefix + ": " + text
	if c.json {
		rec := struct {
			Error string `json:"error"`
			Usage string `json:"usage,omitempty"`
		}{Error: msg}
		if usage {
			rec.Usage = synopsis
		}
		b, _ := json.Marshal(rec)
		fmt.Fprintf(c.stderr, "%s\n", b)
	} else {
		fmt.Fprintln(c.stderr, msg)
		switch {
		case usage && cmd != nil:
			fmt.Fprintf(c.stderr, "usage: %s\n", synopsis)
		case usage:
			c.usage(c.stderr)
		}
	}
	if usage {
		return 2
	}
	return 1
}

func (c *ctx) usage(w io.Writer) {
	fmt.Fprintln(w, "caskg — counterfactual-causal skill graphs for agent skill retrieval")
	fmt.Fprintln(w, "\nusage: caskg COMMAND [flags]")
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", cmd.name, cmd.summary, cmd.args)
	}
	fmt.Fprintln(w, "\nRun 'caskg COMMAND -h' for a command's flags.")
}

// usagef returns an error that prints the command's usage after the message.
func usagef(format string, a ...any) error { return cmdline.Usagef(format, a...) }

// parse parses flags that may come before, between or after positional arguments, and returns
// the positional arguments. "--" ends flag parsing.
func parse(c *ctx, fs *flag.FlagSet, args []string, synopsis string) ([]string, error) {
	return cmdline.Parse(c.stdout, "caskg", fs, args, synopsis)
}

// oneArtifact is the usage error of a command given other than one ARTIFACT.
func oneArtifact(pos []string) error {
	if len(pos) != 1 {
		return usagef("want exactly one ARTIFACT, got %d arguments", len(pos))
	}
	return nil
}

// parseArtifact parses the arguments of a command over one artifact and loads it, returning
// its path.
func parseArtifact(c *ctx, fs *flag.FlagSet, args []string, synopsis string) (string, *graphs.Graph, error) {
	pos, err := parse(c, fs, args, synopsis)
	if err != nil {
		return "", nil, err
	}
	if err := oneArtifact(pos); err != nil {
		return "", nil, err
	}
	g, err := loadArtifact(pos[0])
	return pos[0], g, err
}

// loadArtifact reads and decodes an artifact file, naming the file in any error.
func loadArtifact(path string) (*graphs.Graph, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not an artifact (.skg); build one from it first: caskg build %s -o library.skg", path, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := graphs.Decode(data)
	if err != nil {
		if errors.Is(err, graphs.ErrNotArtifact) {
			return nil, fmt.Errorf("%s: not a caskg artifact (.skg); build one with 'caskg build'", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// loadEngine loads an artifact and prepares an engine over it.
func loadEngine(path string) (*engine.Engine, error) {
	g, err := loadArtifact(path)
	if err != nil {
		return nil, err
	}
	return engine.New(g), nil
}
