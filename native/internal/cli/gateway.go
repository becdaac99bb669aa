package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/internal/gateway"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/native/internal/syncio"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

const gatewayArgs = "--config SERVERS.json --state-dir DIR [--http ADDR [--auth-tokens FILE] [--allowed-hosts H,...]] [--max-sessions N] [--session-idle 10m] [--trace-rate N] [--learn-every N] [--learn-idle 2m] [--expose N] [--trace-gap 30s] [--trace-rotate-mb 64] [--start-wait 3s] [--lenient] [--task-min-runs N] [--no-task-text] | rollback --state-dir DIR [--relearn]"

// gatewayShutdown bounds how long SIGTERM waits for a running graph build before cancelling it.
const gatewayShutdown = 30 * time.Second

// runGateway serves one MCP endpoint in front of the servers of an mcpServers file: on stdio
// (stdout carries the protocol, everything for people goes to stderr), or with --http on
// streamable HTTP at /mcp with GET /v1/health and GET /metrics beside it. SIGINT or SIGTERM stops it: the
// sessions' traces in flight are recorded, the learning loop closes without a half-written
// graph, and the stdio servers are shut down.
func runGateway(c *ctx, args []string) error {
	if len(args) > 0 && args[0] == "rollback" {
		return runGatewayRollback(c, args[1:])
	}
	// Servers' stderr lines, the learning loop and the front all write status lines from
	// their own goroutines.
	locked := *c
	locked.stderr = syncio.NewWriter(c.stderr)
	c = &locked
	fl := flag.NewFlagSet("gateway", flag.ContinueOnError)
	config := fl.String("config", "", "the mcpServers `file` (the JSON Claude Desktop, Claude Code and Cursor read)")
	stateDir := fl.String("state-dir", "", "`folder` for the catalog, the graph, its build state and the traces (created if missing)")
	httpAddr := fl.String("http", "", "serve streamable HTTP on `host:port` at /mcp, with GET /v1/health and GET /metrics (Prometheus), instead of stdio")
	learnEvery := fl.Int("learn-every", 0, "new traces between incremental graph updates (0: the learning loop's default)")
	learnIdle := fl.Duration("learn-idle", learn.DefaultLearnAfterQuiet, "learn traces fewer than --learn-every once this long passes without a new one (0: never)")
	expose := fl.Int("expose", 0, "list the top `N` tools of a session's latest search as its own tools, callable by name")
	traceGap := fl.Duration("trace-gap", gateway.DefaultTraceGap, "a session's trace is written after this long without a call, and open traces are checkpointed this often: a kill -9 loses at most this long of calls")
	idle := fl.Duration("idle", 0, "the old name of --trace-gap")
	lenient := fl.Bool("lenient", false, "warn about an unknown field in --config instead of refusing it")
	authTokens := fl.String("auth-tokens", "", "with --http: every request needs Authorization: Bearer TOKEN of this `file`'s lines NAME TOKEN (default $"+tokensEnv+"); needed beyond loopback")
	allowedHosts := fl.String("allowed-hosts", "", "with --http: the comma-separated `names` a request beyond loopback may give as Host (DNS-rebinding protection); empty: any")
	maxSessions := fl.Int("max-sessions", gateway.DefaultMaxSessions, "sessions open at once; a new one beyond ends the session idle longest")
	sessionIdle := fl.Duration("session-idle", gateway.DefaultSessionTimeout, "close an HTTP session without a request for this long")
	traceRate := fl.Int("trace-rate", gateway.DefaultTraceRate, "traces each client may record a minute; more are dropped (negative: no limit)")
	rotateMB := fl.Int("trace-rotate-mb", learn.DefaultRotateBytes>>20, "rotate traces.jsonl to traces.NNNNNN.jsonl at this many MiB; every rotated file is kept and learned (0: never rotate)")
	startWait := fl.Duration("start-wait", gateway.DefaultStartWait, "the first search waits up to this long for servers still starting (0: no wait)")
	taskMinRuns, noTaskText := engine.DefaultTaskMinRuns, false
	registerTaskFlags(fl, &taskMinRuns, &noTaskText)
	var synonymsPath string
	registerSynonymsFlag(fl, &synonymsPath, "; every graph the gateway builds applies them, and a graph built with other rules is rebuilt")
	pos, err := parse(c, fl, args, gatewayArgs)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("unexpected argument %q%s", pos[0], cmdline.DidYouMean(pos[0], []string{"rollback"}, ""))
	case *config == "":
		return usagef("--config SERVERS.json is required")
	case *stateDir == "":
		return usagef("--state-dir DIR is required")
	case *learnEvery < 0:
		return usagef("--learn-every %d: must not be negative", *learnEvery)
	case *learnIdle < 0:
		return usagef("--learn-idle %v: must not be negative", *learnIdle)
	case *expose < 0 || *expose > service.MaxK:
		return usagef("--expose %d: must be in [0, %d]", *expose, service.MaxK)
	case *traceGap <= 0:
		return usagef("--trace-gap %v: must be positive", *traceGap)
	case *idle < 0:
		return usagef("--idle %v: must be positive", *idle)
	case taskMinRuns < 1:
		return checkTaskMinRuns(taskMinRuns)
	case *maxSessions < 1:
		return usagef("--max-sessions %d: must be at least 1", *maxSessions)
	case *sessionIdle <= 0:
		return usagef("--session-idle %v: must be positive", *sessionIdle)
	case *rotateMB < 0 || *rotateMB > 1<<20:
		return usagef("--trace-rotate-mb %d: must be in [0, %d] (0: never rotate)", *rotateMB, 1<<20)
	case *startWait < 0:
		return usagef("--start-wait %v: must not be negative (0: the first search does not wait)", *startWait)
	case *traceRate == 0:
		return usagef("--trace-rate 0: would record nothing; give a positive rate, or a negative one for no limit")
	case *httpAddr == "" && (*authTokens != "" || *allowedHosts != ""):
		return usagef("--auth-tokens and --allowed-hosts are for --http; stdio has one trusted client")
	}
	if *idle > 0 {
		*traceGap = *idle
	}
	var synonyms *builder.Synonyms
	if synonymsPath != "" {
		if synonyms, err = builder.ReadSynonyms(synonymsPath); err != nil {
			return err
		}
	}
	cfg, warnings, err := gateway.LoadConfig(*config, gateway.ConfigOptions{Lenient: *lenient})
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(c.stderr, "caskg gateway: "+w)
	}
	var tokens *gateway.Tokens
	var ln net.Listener
	if *httpAddr != "" {
		file := *authTokens
		if file == "" {
			file = os.Getenv(tokensEnv)
		}
		if file != "" {
			var tw []string
			if tokens, tw, err = gateway.LoadTokens(file); err != nil {
				return err
			}
			for _, w := range tw {
				fmt.Fprintln(c.stderr, "caskg gateway: "+w)
			}
			fmt.Fprintf(c.stderr, "caskg gateway: %d clients from %s; every request needs a bearer token\n", len(tokens.Names()), file)
		}
		for _, w := range gateway.ClientWarnings(cfg, tokens) {
			fmt.Fprintln(c.stderr, "caskg gateway: "+w)
		}
		// Listening before the servers start, so that a front it must refuse starts nothing.
		if ln, err = net.Listen("tcp", *httpAddr); err != nil {
			return fmt.Errorf("--http %s: %w", *httpAddr, err)
		}
		defer ln.Close()
		if err := gateway.CheckBind(ln.Addr(), tokens); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*stateDir, 0o755); err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	prev, err := os.ReadFile(filepath.Join(*stateDir, "catalog.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--state-dir: %w", err)
	}
	logf := func(format string, a ...any) { fmt.Fprintf(c.stderr, "caskg "+format+"\n", a...) }
	rotate := int64(*rotateMB) << 20
	if rotate == 0 {
		rotate = -1 // learn.Options: 0 is the default, negative never
	}
	learner, closeLearner, err := openLearner(*stateDir, learn.Options{LearnEvery: *learnEvery, LearnAfterQuiet: *learnIdle, Logf: logf,
		TaskMinRuns: taskMinRuns, NoTaskText: noTaskText, Synonyms: synonyms, RotateBytes: rotate})
	if err != nil {
		return err
	}
	wait := *startWait
	if wait == 0 {
		wait = -1 // gateway.Options: 0 is the default, negative no wait
	}
	g, err := gateway.New(cfg, gateway.Options{Learner: learner, PreviousCatalog: prev, Expose: *expose, TraceGap: *traceGap,
		Version: engine.Version, Logf: logf, Tokens: tokens, AllowedHosts: splitList(*allowedHosts),
		MaxSessions: *maxSessions, SessionTimeout: *sessionIdle, TraceRate: *traceRate, StartWait: wait})
	if err != nil {
		closeLearner(context.Background())
		return err
	}
	fmt.Fprintf(c.stderr, "caskg gateway: %d servers from %s; state in %s\n", len(cfg.Servers), *config, *stateDir)

	ctx, stop := serveContext()
	defer stop()
	if *httpAddr != "" {
		err = serveGatewayHTTP(ctx, c, g, ln, tokens != nil)
	} else {
		err = g.ServeStdio(ctx, stdin, c.stdout)
	}
	// Sessions first, so that their traces in flight reach the loop before it closes.
	g.Close()
	shut, cancel := context.WithTimeout(context.Background(), gatewayShutdown)
	defer cancel()
	if cerr := closeLearner(shut); cerr != nil && err == nil {
		err = cerr
	}
	fmt.Fprintln(c.stderr, "caskg gateway: stopped")
	return err
}

// openLearner opens the learning loop over the state folder (package learn), and returns it
// with the function that closes it.
func openLearner(dir string, opt learn.Options) (gateway.Learner, func(context.Context) error, error) {
	l, err := learn.Open(dir, opt)
	if err != nil {
		return nil, nil, err
	}
	return l, l.Close, nil
}

// tokensEnv names the tokens file when --auth-tokens is not given. It names a file rather than
// holding the tokens: the environment is readable in /proc by the user's other processes and
// passes to stdio servers with "inheritEnv", a file can be mode 600.
const tokensEnv = "CASKG_GATEWAY_TOKENS"

// splitList splits a comma-separated flag, blanks trimmed and empty items dropped.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func serveGatewayHTTP(ctx context.Context, c *ctx, g *gateway.Gateway, ln net.Listener, authed bool) error {
	fmt.Fprintf(c.stderr, "caskg gateway: MCP at http://%s/mcp, health at http://%s/v1/health, metrics at http://%s/metrics; Ctrl-C stops\n", ln.Addr(), ln.Addr(), ln.Addr())
	if !mcptransport.IsLoopbackAddr(ln.Addr()) && authed {
		fmt.Fprintf(c.stderr, "caskg gateway: %s is reachable beyond this machine: only clients with a token are served; put TLS in front of it (a token crosses the network as plain text over http://)\n", ln.Addr())
	}
	serveReady(ln.Addr().String())
	return mcptransport.ServeHTTP(ctx, ln, g.Handler())
}

// runGatewayRollback restores the graph before the latest update of a gateway's state folder
// and sets aside the traces that update learned, so that the next start does not learn them
// again; with --relearn it puts every trace set aside back instead, for the next start to learn.
func runGatewayRollback(c *ctx, args []string) error {
	fl := flag.NewFlagSet("gateway rollback", flag.ContinueOnError)
	stateDir := fl.String("state-dir", "", "the gateway's state `folder`")
	relearn := fl.Bool("relearn", false, "put the traces earlier rollbacks set aside back, for the next start to learn; the graph is not touched")
	pos, err := parse(c, fl, args, "--state-dir DIR [--relearn]")
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("unexpected argument %q", pos[0])
	case *stateDir == "":
		return usagef("--state-dir DIR is required")
	}
	if *relearn {
		n, err := learn.Relearn(*stateDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "caskg gateway: %s: %d traces back in %s; the next start learns them\n", *stateDir, n, learn.TracesFile)
		return nil
	}
	n, err := learn.Rollback(*stateDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "caskg gateway: %s: the previous graph is back; the %d traces it had not learned are set aside in %s (--relearn takes them back)\n",
		*stateDir, n, learn.UndoneFile)
	return nil
}
