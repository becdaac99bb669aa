package js_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/modbuild"
)

// workerd finds workerd: CASKG_WORKERD (make test sets it; the test fails if it names no
// program), else where make workerd installs it; without either the test is skipped.
func workerd(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CASKG_WORKERD"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Fatalf("CASKG_WORKERD=%s: not an executable workerd (%v); run make workerd", p, err)
		}
		return p
	}
	arch := map[string]string{"arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		arch = "64"
	}
	p, _ := filepath.Abs("../../.cache/workerd/node_modules/@cloudflare/workerd-" + runtime.GOOS + "-" + arch + "/bin/workerd")
	if _, err := os.Stat(p); err != nil {
		t.Skip("workerd not installed (make workerd installs it, make test sets CASKG_WORKERD)")
	}
	return p
}

// TestWorkerd runs caskg.js in workerd, a host without import.meta.url that compiles
// WebAssembly only from an import: importing caskg.js must not throw, load without a module
// must say what to pass, and load with the imported module must answer.
func TestWorkerd(t *testing.T) {
	bin := workerd(t)
	dir := t.TempDir()
	if err := modbuild.Build(filepath.Join(dir, "caskg.wasm")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ from, to string }{{"caskg.js", "caskg.js"}, {"testdata/worker.mjs", "worker.mjs"}, {"testdata/workerd.capnp", "workerd.capnp"}} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sample.skg"), testlib.Sample(t), 0o644); err != nil {
		t.Fatal(err)
	}

	ctl, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	var logs strings.Builder
	cmd := exec.Command(bin, "serve", "workerd.capnp", "--socket-addr", "http=127.0.0.1:0", "--control-fd", "3")
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{ctlW}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlW.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("workerd's output:\n%s", logs.String())
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
	var p int
	select {
	case p = <-port:
		if p == 0 {
			t.Fatal("workerd ended without listening")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("workerd did not listen within 60 s")
	}

	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(p) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got struct {
		ModuleURL     *string  `json:"moduleURL"`
		WithoutModule string   `json:"withoutModule"`
		Results       []string `json:"results"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("answer %d %s", resp.StatusCode, body)
	}
	if got.ModuleURL != nil {
		t.Errorf("moduleURL %q in workerd, want null (no import.meta.url)", *got.ModuleURL)
	}
	if !strings.HasPrefix(got.WithoutModule, "CaskgError: caskg: module: this host gives modules no URL") {
		t.Errorf("load(null, artifact) in workerd: %q, want the CaskgError saying to pass the module", got.WithoutModule)
	}
	if len(got.Results) != 3 || !slices.Contains(got.Results, "heat-object-in-microwave") {
		t.Errorf("results %q, want 3 with heat-object-in-microwave", got.Results)
	}
}
