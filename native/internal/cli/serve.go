package cli

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/caskg/caskg/native/internal/graceful"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// serveContext is the life of a serve or mcp --http run: until SIGINT or SIGTERM. serveReady is told the
// address once the server listens. Tests replace both.
var (
	serveContext = func() (context.Context, context.CancelFunc) {
		return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	}
	serveReady = func(addr string) {}
)

// runServe serves the playground, the WebAssembly module, the artifact and the retrieval API
// until interrupted. The page, caskg.js and the module are the copies embedded in the binary
// (make build puts them there); --root serves a checkout's live files instead, and --playground,
// --js and --wasm each one of them. Without ARTIFACT it serves the sample graph of the
// repository above the working directory or the executable.
func runServe(c *ctx, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on (port 0 picks a free one)")
	root := fs.String("root", "", "serve the page, caskg.js and the module live from this caskg checkout `folder` instead of the copies in the binary (for working on them)")
	play := fs.String("playground", "", "folder of the playground page (default: embedded, or ROOT/playground)")
	js := fs.String("js", "", "folder of caskg.js (default: embedded, or ROOT/wasm/js)")
	wasm := fs.String("wasm", "", "the WebAssembly module (default: embedded, or ROOT/bin/caskg.wasm; make wasm builds it)")
	tasks := fs.String("tasks", "", "JSONL tasks {\"id\", \"query\", \"gold\"} the page offers (default ROOT/graphs/sample-tasks.jsonl with the sample artifact)")
	cors := fs.String("cors-origins", "", "comma-separated `origins` a browser lets call the API (https://a.example,http://localhost:3000), * for any, none for none (default: * on a loopback address, none otherwise)")
	feedback, feedbackQuery := feedbackFlags(fs)
	feedbackTokens := feedbackTokensFlag(fs)
	pos, err := parse(c, fs, args, "[ARTIFACT] [--addr 127.0.0.1:8080] [--tasks TASKS.jsonl] [--cors-origins LIST] [--root DIR] [--feedback FILE [--feedback-query-text] [--feedback-tokens FILE]]")
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one ARTIFACT, got %d arguments", len(pos))
	}
	if *root != "" {
		def := func(v *string, rel string) {
			if *v == "" {
				*v = filepath.Join(*root, rel)
			}
		}
		def(play, "playground")
		def(js, filepath.Join("wasm", "js"))
		def(wasm, filepath.Join("bin", "caskg.wasm"))
	}
	artifact := ""
	if len(pos) == 1 {
		artifact = pos[0]
	} else {
		dir := *root
		if dir == "" {
			if dir, err = findRoot(); err != nil {
				return fmt.Errorf("no ARTIFACT given and %w", err)
			}
		}
		artifact = filepath.Join(dir, "bin", "sample.skg")
		if _, err := os.Stat(artifact); err != nil {
			return fmt.Errorf("no ARTIFACT given and %s not found: run 'make demo' or give an artifact", artifact)
		}
		if *tasks == "" {
			*tasks = filepath.Join(dir, "graphs", "sample-tasks.jsonl")
		}
	}
	origins, err := corsOrigins(*cors, *addr)
	if err != nil {
		return err
	}
	var auth service.FeedbackAuth
	switch {
	case *feedback != "":
		if auth, err = feedbackAuth(*feedbackTokens, *addr); err != nil {
			return err
		}
	case *feedbackTokens != "":
		return usagef("--feedback-tokens needs --feedback FILE")
	}
	fb, err := openFeedback(*feedback, *feedbackQuery)
	if err != nil {
		return err
	}
	opts := serve.Options{Artifact: artifact, Playground: *play, JS: *js, WASM: *wasm, Tasks: *tasks,
		Version: engine.Version, Origins: origins, Reload: true, Reporters: auth,
		Logf: func(format string, a ...any) { fmt.Fprintf(c.stderr, "caskg serve: "+format+"\n", a...) }}
	if fb != nil {
		defer fb.Close()
		opts.Feedback = fb
	}
	srv, err := serve.New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	g := srv.Engine().Graph()
	fmt.Fprintf(c.stderr, "caskg serve: %s (%d skills, %d edges)\n", artifact, g.NumSkills(), g.NumEdges())
	fmt.Fprintf(c.stdout, "playground: http://%s/\n", ln.Addr())
	who := "any origin may call it"
	switch {
	case origins == nil:
	case len(origins) == 0:
		who = "only the page's own origin may call it; --cors-origins allows others"
	default:
		who = "callable from " + strings.Join(origins, ", ")
	}
	fmt.Fprintf(c.stderr, "caskg serve: API at http://%s%s (%s); the artifact reloads when its file changes; Ctrl-C stops\n", ln.Addr(), serve.APIPrefix, who)

	if fb != nil {
		fmt.Fprintf(c.stderr, "caskg serve: feedback: POST %sfeedback appends trace lines to %s (%s; %s)\n", serve.APIPrefix, fb.Path(), queryNote(*feedbackQuery), authNote(auth))
	}

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	ctx, stop := serveContext()
	defer stop()
	serveReady(ln.Addr().String())
	if err := graceful.Serve(ctx, hs, ln, mcptransport.ShutdownTimeout); err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, "caskg serve: stopped")
	return nil
}

// feedbackFlags declares --feedback and --feedback-query-text, shared by serve and mcp.
func feedbackFlags(fs *flag.FlagSet) (file *string, queryText *bool) {
	file = fs.String("feedback", "", "append feedback reports (skills an agent used for a task) to this JSONL `file` as traces for 'caskg build --traces' (default: off; rotated to FILE.1 at 16 MiB, 10 reports/s, burst 50)")
	queryText = fs.Bool("feedback-query-text", false, "store each report's task text in the feedback file as \"task\" (default: only the skills and outcome)")
	return file, queryText
}

// feedbackTokensFlag declares --feedback-tokens, for the servers that take feedback over HTTP.
func feedbackTokensFlag(fs *flag.FlagSet) *string {
	return fs.String("feedback-tokens", "", "file of feedback reporters' bearer tokens, one \"NAME TOKEN\" a line (default: the variable "+service.TokensEnv+
		"); with tokens every report needs one, and is recorded as from token:NAME; needed to take feedback on an address other than loopback")
}

// feedbackAuth decides who may report feedback to a server listening on addr: the reporters of
// the tokens file (or, without one, of the variable service.TokensEnv), else, on a loopback
// address, anyone, as the one source "loopback". Beyond loopback without tokens it refuses to
// start: anyone who reaches the address could report, as often as the rate limit lets them.
func feedbackAuth(tokensFile, addr string) (service.FeedbackAuth, error) {
	var auth service.FeedbackAuth
	src, text := tokensFile, ""
	if tokensFile != "" {
		b, err := os.ReadFile(tokensFile)
		if err != nil {
			return auth, fmt.Errorf("--feedback-tokens: %w", err)
		}
		text = string(b)
	} else if v, ok := os.LookupEnv(service.TokensEnv); ok {
		src, text = service.TokensEnv, v
	}
	if src != "" {
		tokens, err := service.ParseTokens(src, text)
		if err != nil {
			return auth, err
		}
		auth.Tokens = tokens
		return auth, nil
	}
	if !loopback(addr) {
		return auth, fmt.Errorf("--feedback on %s, an address beyond loopback, needs reporters' tokens "+
			"(--feedback-tokens FILE or the variable %s): without them anyone who reaches it could report", addr, service.TokensEnv)
	}
	auth.Local = service.LoopbackSource
	return auth, nil
}

// loopback reports whether the host of addr (host:port) is a loopback address or localhost.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (host == "localhost" || ip != nil && ip.IsLoopback())
}

func authNote(auth service.FeedbackAuth) string {
	if n := auth.Tokens.Len(); n > 0 {
		return fmt.Sprintf("%d reporters' bearer tokens", n)
	}
	return "from anyone on this machine, as the one reporter " + auth.Local + "; --feedback-tokens names reporters"
}

// openFeedback opens the feedback log of --feedback; nil without it.
func openFeedback(file string, queryText bool) (*serve.FeedbackLog, error) {
	if file == "" {
		if queryText {
			return nil, usagef("--feedback-query-text needs --feedback FILE")
		}
		return nil, nil
	}
	return serve.OpenFeedbackLog(file, serve.FeedbackOptions{QueryText: queryText})
}

func queryNote(queryText bool) string {
	if queryText {
		return "with the task text"
	}
	return "skills and outcome only; --feedback-query-text adds the task text"
}

// corsOrigins reads --cors-origins: nil for any origin, an empty list for none. By default a
// server on a loopback address answers any origin (only pages in this machine's browsers reach
// it, and the API only reads the artifact) and any other none.
func corsOrigins(flagValue, addr string) ([]string, error) {
	v := strings.TrimSpace(flagValue)
	switch v {
	case "":
		if loopback(addr) {
			return nil, nil
		}
		return []string{}, nil
	case "*":
		return nil, nil
	case "none":
		return []string{}, nil
	}
	var out []string
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		if o == "*" {
			return nil, nil
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || strings.HasSuffix(o, "/") {
			return nil, usagef("--cors-origins: %q is not an origin such as https://example.com or http://localhost:3000", o)
		}
		out = append(out, o)
	}
	return out, nil
}

// findRoot returns the first folder holding playground/index.html above the working directory,
// else above the executable (bin/caskg sits in the repository).
func findRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for {
			if fi, err := os.Stat(filepath.Join(dir, "playground", "index.html")); err == nil && fi.Mode().IsRegular() {
				return dir, nil
			}
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
		}
	}
	return "", fmt.Errorf("cannot find the caskg repository (a folder with playground/index.html) above %q; give it with --root", starts)
}
