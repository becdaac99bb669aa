package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/wasm/engine"
)

// runMCP serves an artifact to agents over MCP on stdin and stdout until the client hangs up,
// or with --http over streamable HTTP at /mcp until SIGINT or SIGTERM. Everything for people
// goes to stderr: stdout carries the protocol.
func runMCP(c *ctx, args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	library := fs.String("library", "", "folder of SKILL.md files the artifact was built from; get_skill serves whole files from it")
	httpAddr := fs.String("http", "", "serve streamable HTTP at http://`host:port`/mcp (and GET /v1/health) instead of stdio; port 0 picks a free one")
	feedback, feedbackQuery := feedbackFlags(fs)
	path, g, err := parseArtifact(c, fs, args, "ARTIFACT [--library DIR] [--feedback FILE [--feedback-query-text]] [--http ADDR]")
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
	var ln net.Listener
	where := "stdio"
	if *httpAddr != "" {
		if ln, err = net.Listen("tcp", *httpAddr); err != nil {
			return fmt.Errorf("--http %s: %w", *httpAddr, err)
		}
		defer ln.Close()
		where = "http://" + ln.Addr().String() + mcptransport.MCPPath
	}
	fmt.Fprintf(c.stderr, "caskg mcp: serving %s (%d skills, %d edges) on %s\n", path, g.NumSkills(), g.NumEdges(), where)
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

	if ln != nil {
		return serveMCPHTTP(c, srv, ln, g.NumSkills(), g.NumEdges(), path)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// mcptransport.Transport answers malformed lines instead of ending the session, and on EOF
	// waits for the replies still owed.
	err = srv.Run(ctx, &mcptransport.Transport{Reader: stdin, Writer: c.stdout})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// serveMCPHTTP serves srv's tools over streamable HTTP on ln until serveContext ends (SIGINT
// or SIGTERM), with GET /v1/health beside /mcp.
func serveMCPHTTP(c *ctx, srv *mcpserver.Server, ln net.Listener, skills, edges int, artifact string) error {
	if !mcptransport.IsLoopbackAddr(ln.Addr()) {
		// Nothing checks who calls: any client that reaches the address can run the tools, and
		// report_skill_use writes to the feedback file. A bearer-token check belongs in
		// HTTPOptions.Guard.
		fmt.Fprintf(c.stderr, "caskg mcp: warning: %s is reachable beyond this machine, and any client that reaches it may call the tools; bind 127.0.0.1 unless that is what you want\n", ln.Addr())
	}
	health := map[string]any{"status": "ok", "version": engine.Version, "artifact": artifact, "skills": skills, "edges": edges}
	// One mcp.Server for every session: its tools read the shared graph, and sessions keep
	// their state in the SDK's session, not in the server.
	m := srv.MCP()
	h := mcptransport.HTTPHandler(func(*http.Request) *mcp.Server { return m }, mcptransport.HTTPOptions{
		Health: func() any { return health },
	})
	ctx, stop := serveContext()
	defer stop()
	fmt.Fprintf(c.stderr, "caskg mcp: health at http://%s%s; Ctrl-C stops\n", ln.Addr(), mcptransport.HealthPath)
	serveReady(ln.Addr().String())
	if err := mcptransport.ServeHTTP(ctx, ln, h); err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, "caskg mcp: stopped")
	return nil
}
