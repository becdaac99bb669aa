package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// serveContext is the life of a serve run: until SIGINT or SIGTERM. serveReady is told the
// address once the server listens. Tests replace both.
var (
	serveContext = func() (context.Context, context.CancelFunc) {
		return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	}
	serveReady = func(addr string) {}
)

// runServe serves the playground, the WebAssembly module, the artifact and the retrieval API
// until interrupted. Files are found under the repository (--root, else the first folder above
// the working directory or the executable that holds playground/index.html).
func runServe(c *ctx, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on (port 0 picks a free one)")
	root := fs.String("root", "", "the caskg repository `folder` the files below are found in (default: found from the working directory or the executable)")
	play := fs.String("playground", "", "folder of the playground page (default ROOT/playground)")
	js := fs.String("js", "", "folder of caskg.js (default ROOT/wasm/js)")
	wasm := fs.String("wasm", "", "the WebAssembly module (default ROOT/bin/caskg.wasm; make wasm builds it)")
	tasks := fs.String("tasks", "", "JSONL tasks {\"id\", \"query\", \"gold\"} the page offers (default ROOT/graphs/sample-tasks.jsonl with the sample artifact)")
	pos, err := parse(c, fs, args, "[ARTIFACT] [--addr 127.0.0.1:8080] [--root DIR] [--tasks TASKS.jsonl]")
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one ARTIFACT, got %d arguments", len(pos))
	}
	if *root == "" {
		if *root, err = findRoot(); err != nil && (*play == "" || *js == "" || *wasm == "" || len(pos) == 0) {
			return err
		}
	}
	def := func(v *string, rel string) {
		if *v == "" {
			*v = filepath.Join(*root, rel)
		}
	}
	def(play, "playground")
	def(js, filepath.Join("wasm", "js"))
	def(wasm, filepath.Join("bin", "caskg.wasm"))
	artifact := ""
	if len(pos) == 1 {
		artifact = pos[0]
	} else {
		artifact = filepath.Join(*root, "bin", "sample.skg")
		if _, err := os.Stat(artifact); err != nil {
			return fmt.Errorf("no ARTIFACT given and %s not found: run 'make demo' or give an artifact", artifact)
		}
		def(tasks, filepath.Join("graphs", "sample-tasks.jsonl"))
	}
	srv, err := serve.New(serve.Options{Artifact: artifact, Playground: *play, JS: *js, WASM: *wasm, Tasks: *tasks, Version: engine.Version})
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
	fmt.Fprintf(c.stderr, "caskg serve: API at http://%s%s (any origin may call it); Ctrl-C stops\n", ln.Addr(), api.Prefix)

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	ctx, stop := serveContext()
	defer stop()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	serveReady(ln.Addr().String())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(c.stderr, "caskg serve: stopped")
	return nil
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
