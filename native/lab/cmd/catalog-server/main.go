// Command catalog-server serves a tool catalog file as an MCP server whose tools answer every
// call with a deterministic result shaped by their schemas (see package catalogserver). Tests,
// `make eval` and `make bench` put it behind the gateway.
//
//	catalog-server --tools FILE [--http ADDR] [--page-size N] [--delay D] [--fail-rate R] [--rpc-fail-rate R]
//
// It speaks MCP on stdin and stdout, or with --http on streamable HTTP at /mcp; then it prints
// "catalog-server: listening on http://HOST:PORT/mcp" on stderr once it accepts connections
// (ADDR may end in :0 for a free port). What had to change in the catalog for MCP to accept it
// is summed up on stderr at start.
package main

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
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/graceful"
	"github.com/caskg/caskg/native/internal/lab/catalogserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalog-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("catalog-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("tools", "", "the tool catalog: a tools/list result, an array of tools or JSON Lines (required)")
	addr := fs.String("http", "", "serve streamable HTTP at `ADDR`/mcp instead of stdio")
	var opt catalogserver.Options
	fs.IntVar(&opt.PageSize, "page-size", catalogserver.DefaultPageSize, "tools per tools/list page")
	fs.DurationVar(&opt.Delay, "delay", 0, "simulated latency added to every tools/call")
	fs.Float64Var(&opt.FailRate, "fail-rate", 0, "share of distinct calls that fail with a tool error, chosen by a hash of the call")
	fs.Float64Var(&opt.RPCFailRate, "rpc-fail-rate", 0, "share of distinct calls answered with a JSON-RPC error, chosen by another hash")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("usage: catalog-server --tools FILE [--http ADDR] [--page-size N] [--delay D] [--fail-rate R] [--rpc-fail-rate R]")
	}
	if opt.PageSize == 0 {
		return errors.New("--page-size must be at least 1")
	}
	c, err := catalogserver.Load(*file)
	if err != nil {
		return err
	}
	s, err := catalogserver.NewServer(c, opt)
	if err != nil {
		return err
	}
	summarize(stderr, *file, c)
	if *addr == "" {
		return s.Run(ctx, &mcp.StdioTransport{})
	}
	return serveHTTP(ctx, s, *addr, stderr)
}

// summarize prints how many tools are served and how many notes of each kind the catalog got.
func summarize(w io.Writer, file string, c *catalogserver.Catalog) {
	counts := map[string]int{}
	changed := map[string]bool{}
	for _, n := range c.Notes {
		counts[n.Msg]++
		changed[n.Msg] = n.Changed
	}
	fmt.Fprintf(w, "catalog-server: %d tools from %s\n", len(c.Tools), file)
	msgs := make([]string, 0, len(counts))
	for m := range counts {
		msgs = append(msgs, m)
	}
	slices.Sort(msgs)
	for _, m := range msgs {
		verb := "kept"
		if changed[m] {
			verb = "changed"
		}
		fmt.Fprintf(w, "catalog-server: %d× %s (%s)\n", counts[m], m, verb)
	}
}

func serveHTTP(ctx context.Context, s *mcp.Server, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "catalog-server: listening on http://%s/mcp\n", ln.Addr())
	return graceful.Serve(ctx, srv, ln, 5*time.Second)
}
