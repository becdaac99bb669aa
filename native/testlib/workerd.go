package testlib

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/wasm/modbuild"
)

// The edge worker under workerd, for its end-to-end tests (wasm/worker) and for those that
// hold it to caskg mcp with the MCP TypeScript SDK (native/internal/mcpserver): the bundle as make
// worker builds it for the sample, served on 127.0.0.1.

var workerClient = &http.Client{Timeout: 30 * time.Second}

// workerdPath finds workerd: CASKG_WORKERD (make sets it; the test fails if it names no
// program), else where make workerd installs it; without either the test is skipped.
func workerdPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("CASKG_WORKERD"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			tb.Fatalf("CASKG_WORKERD=%s: not an executable workerd (%v); run make workerd", p, err)
		}
		return p
	}
	arch := "64"
	if runtime.GOARCH == "arm64" {
		arch = "arm64"
	}
	r, err := root()
	if err != nil {
		tb.Fatal(err)
	}
	p, _ := filepath.Abs(filepath.Join(r, ".cache/workerd/node_modules/@cloudflare/workerd-"+runtime.GOOS+"-"+arch+"/bin/workerd"))
	if _, err := os.Stat(p); err != nil {
		tb.Skip("workerd not installed (make workerd installs it, make test sets CASKG_WORKERD); skipping the end-to-end test")
	}
	return p
}

var bundle struct { // WorkerBundle's
	once sync.Once
	dir  string
	err  error
}

// WorkerBundle builds the edge worker's bundle once per test binary, as make worker does: the Go
// program for js/wasm, wasm_exec.js from workers-assets-gen, entry.mjs, workerd.capnp and the
// sample artifact.
func WorkerBundle(tb testing.TB) string {
	tb.Helper()
	data := Sample(tb)
	bundle.once.Do(func() {
		bundle.dir, bundle.err = os.MkdirTemp("", "caskg-worker-bundle-")
		if bundle.err != nil {
			return
		}
		dir := bundle.dir
		r, err := root()
		if err != nil {
			bundle.err = err
			return
		}
		src := filepath.Join(r, "wasm", "worker")
		run := func(env []string, args ...string) error {
			cmd := exec.Command("go", args...)
			cmd.Dir = src
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return errors.New("go " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out))
			}
			return nil
		}
		// The reactor's environment (the classic collector, as make worker builds), for js.
		if err := run(append(modbuild.Env(), "GOOS=js"),
			"build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "app.wasm"), "."); err != nil {
			bundle.err = err
			return
		}
		gen := filepath.Join(dir, "gen")
		if err := run(nil, "run", "github.com/syumai/workers/cmd/workers-assets-gen", "-mode", "go", "-o", gen); err != nil {
			bundle.err = err
			return
		}
		if bundle.err = os.MkdirAll(filepath.Join(dir, "assets"), 0o755); bundle.err != nil {
			return
		}
		if bundle.err = os.WriteFile(filepath.Join(dir, "artifact.mjs"), workerArtifactModule(data), 0o644); bundle.err != nil {
			return
		}
		for _, f := range [][2]string{
			{filepath.Join(gen, "wasm_exec.js"), "wasm_exec.js"},
			{filepath.Join(src, "entry.mjs"), "entry.mjs"},
			{filepath.Join(src, "workerd.capnp"), "workerd.capnp"},
		} {
			b, err := os.ReadFile(f[0])
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, f[1]), b, 0o644)
			}
			if err != nil {
				bundle.err = err
				return
			}
		}
		bundle.err = os.WriteFile(filepath.Join(dir, "assets", "caskg.skg"), data, 0o644)
	})
	if bundle.err != nil {
		tb.Fatal(bundle.err)
	}
	return bundle.dir
}

// workerArtifactModule is the artifact.mjs make worker writes for the artifact data as an
// asset: its checksum is the artifact header's CRC-32C, as make worker reads it with od.
func workerArtifactModule(data []byte) []byte {
	sum := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(data[12:16])), 16)
	return []byte("export const asset = \"caskg.skg\";\nexport const embedded = null;\nexport const checksum = \"crc32c:" +
		strings.Repeat("0", 8-len(sum)) + sum + "\";\n")
}

// RemoveWorkerBundle removes what WorkerBundle built; a TestMain calls it after the tests.
func RemoveWorkerBundle() {
	if bundle.dir != "" {
		os.RemoveAll(bundle.dir)
	}
}

// StartWorkerd serves the bundle of WorkerBundle with the config constant name ("config" or
// "feedback") and workerd's further args on a free port of 127.0.0.1 and returns its base URL
// once /v1/health answers. workerd is stopped when the test ends.
func StartWorkerd(tb testing.TB, config string, args ...string) string {
	tb.Helper()
	base := ServeWorker(tb, WorkerBundle(tb), config, args...)
	// The first request starts the Go program; wait for it a bounded number of times.
	var lastErr error
	for range 100 {
		resp, err := workerClient.Get(base + "/v1/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
			err = errors.New(resp.Status)
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("workerd at %s is not ready after 100 tries: %v", base, lastErr)
	return ""
}

// ServeWorker starts workerd on the bundle in dir, with the config constant name and further
// args, and returns its base URL once it listens.
func ServeWorker(tb testing.TB, dir, config string, args ...string) string {
	tb.Helper()
	bin := workerdPath(tb)
	ctl, ctlW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	defer ctl.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, append([]string{"serve", filepath.Join(dir, "workerd.capnp"), config,
		"--socket-addr", "http=127.0.0.1:0", "--control-fd", "3"}, args...)...)
	cmd.Dir = dir // the disk services' paths are relative to it
	cmd.ExtraFiles = []*os.File{ctlW}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ctlW.Close()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if tb.Failed() {
			tb.Logf("workerd's output:\n%s", logs.String())
		}
	})

	// workerd reports {"event":"listen","socket":"http","port":N} on the control descriptor.
	port := make(chan int, 1)
	go func() {
		defer close(port)
		sc := bufio.NewScanner(ctl)
		for sc.Scan() {
			var ev struct {
				Event, Socket string
				Port          int
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "listen" && ev.Socket == "http" {
				port <- ev.Port
				return
			}
		}
	}()
	select {
	case p, ok := <-port:
		if !ok || p == 0 {
			tb.Fatalf("workerd ended without listening:\n%s", logs.String())
		}
		return "http://127.0.0.1:" + strconv.Itoa(p)
	case <-time.After(60 * time.Second):
		tb.Fatalf("workerd did not listen within 60 s:\n%s", logs.String())
	}
	return ""
}
