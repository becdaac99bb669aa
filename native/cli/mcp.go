package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/caskg/caskg/native/mcpserver"
	"github.com/caskg/caskg/wasm/engine"
)

// runMCP serves an artifact to agents over MCP on stdin and stdout until the client hangs up.
// Everything for people goes to stderr: stdout carries the protocol.
func runMCP(c *ctx, args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	library := fs.String("library", "", "folder of SKILL.md files the artifact was built from; get_skill serves whole files from it")
	feedback, feedbackQuery := feedbackFlags(fs)
	path, g, err := parseArtifact(c, fs, args, "ARTIFACT [--library DIR] [--feedback FILE [--feedback-query-text]]")
	if err != nil {
		return err
	}
	fb, err := openFeedback(*feedback, *feedbackQuery)
	if err != nil {
		return err
	}
	opts := mcpserver.Options{Library: *library, Artifact: path, Version: engine.Version}
	if fb != nil {
		defer fb.Close()
		opts.Feedback = fb
	}
	srv, err := mcpserver.New(g, opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(c.stderr, "caskg mcp: serving %s (%d skills, %d edges) on stdio\n", path, g.NumSkills(), g.NumEdges())
	if fb != nil {
		fmt.Fprintf(c.stderr, "caskg mcp: feedback: report_skill_use appends trace lines to %s (%s)\n", fb.Path(), queryNote(*feedbackQuery))
	}
	if lib := srv.Library(); lib != nil {
		fmt.Fprintf(c.stderr, "caskg mcp: library %s: whole SKILL.md files for %d of %d skills", lib.Dir, lib.Served, g.NumSkills())
		if lib.Problems > 0 {
			fmt.Fprintf(c.stderr, " (%d entries skipped or warned about; first: %v)", lib.Problems, srv.Problems()[0].Error())
		}
		fmt.Fprintln(c.stderr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// mcpserver.Transport answers malformed lines instead of ending the session, and on EOF
	// waits for the replies still owed.
	err = srv.Run(ctx, &mcpserver.Transport{Reader: stdin, Writer: c.stdout})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
