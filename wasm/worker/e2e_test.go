package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// The end-to-end test builds the worker as make worker does, serves it with workerd on
// 127.0.0.1 and sends it the handler's cases, the 40 sample tasks and bad requests.

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
	p, _ := filepath.Abs("../../.cache/workerd/node_modules/@cloudflare/workerd-" + runtime.GOOS + "-" + arch + "/bin/workerd")
	if _, err := os.Stat(p); err != nil {
		tb.Skip("workerd not installed (make workerd installs it, make test sets CASKG_WORKERD); skipping the end-to-end test")
	}
	return p
}

var bundle struct {
	once sync.Once
	dir  string
	err  error
}

// bundleDir builds the worker's bundle once per test binary, as make worker does: the Go
// program for js/wasm, wasm_exec.js from workers-assets-gen, entry.mjs, workerd.capnp and the
// sample artifact.
func bundleDir(tb testing.TB) string {
	tb.Helper()
	data := testlib.Sample(tb)
	bundle.once.Do(func() {
		bundle.dir, bundle.err = os.MkdirTemp("", "caskg-worker-bundle-")
		if bundle.err != nil {
			return
		}
		dir := bundle.dir
		run := func(env []string, args ...string) error {
			cmd := exec.Command("go", args...)
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return errors.New("go " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out))
			}
			return nil
		}
		if err := run([]string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"},
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
		if bundle.err = os.WriteFile(filepath.Join(dir, "artifact.mjs"), artifactModule(data), 0o644); bundle.err != nil {
			return
		}
		for _, f := range [][2]string{
			{filepath.Join(gen, "wasm_exec.js"), "wasm_exec.js"},
			{"entry.mjs", "entry.mjs"},
			{"workerd.capnp", "workerd.capnp"},
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

// artifactModule is the artifact.mjs make worker writes for the artifact data as an asset.
func artifactModule(data []byte) []byte {
	return []byte("export const asset = \"caskg.skg\";\nexport const embedded = null;\nexport const checksum = \"" +
		headerChecksum(data) + "\";\n")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bundle.dir != "" {
		os.RemoveAll(bundle.dir)
	}
	os.Exit(code)
}

// startWorkerd serves the bundle with the config constant name ("config" or
// "feedback") and workerd's further args on a free port of 127.0.0.1 and returns its base URL
// once /v1/health answers. workerd is stopped when the test ends.
func startWorkerd(tb testing.TB, config string, args ...string) string {
	tb.Helper()
	base := serveBundle(tb, bundleDir(tb), config, args...)
	// The first request starts the Go program; wait for it a bounded number of times.
	var lastErr error
	for range 100 {
		resp, err := client.Get(base + "/v1/health")
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

// serveBundle starts workerd on the bundle in dir, with the config constant name and further
// args, and returns its base URL once it listens.
func serveBundle(tb testing.TB, dir, config string, args ...string) string {
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

var client = &http.Client{Timeout: 30 * time.Second}

// do sends c to the worker at base.
func do(tb testing.TB, base string, c apiCase) (int, http.Header, []byte) {
	tb.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, base+c.target, body)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", c.method, c.target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the body: %v", c.method, c.target, err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestWorkerd(t *testing.T) {
	base := startWorkerd(t, "config")
	s := sampleServer(t)
	srv := startServe(t)

	// Every case of the handler's table, with the same answer as the handler natively, and
	// under the API's prefix the same status, key headers and bytes as caskg serve.
	for _, c := range apiCases() {
		t.Run(c.name, func(t *testing.T) {
			var wd answer
			wd.status, wd.header, wd.body = do(t, base, c)
			checkAnswer(t, c, wd.status, wd.header, wd.body)
			// The runtime drops the body of an answer to HEAD; the recorder keeps it.
			if w := serveNative(s, c); w.Code != wd.status || c.method != "HEAD" && !bytes.Equal(w.Body.Bytes(), wd.body) {
				t.Errorf("%s %s: workerd answers %d %s\nnatively %d %s", c.method, c.target, wd.status, wd.body, w.Code, w.Body)
			}
			if strings.HasPrefix(c.target, api.Prefix) {
				var sv answer
				sv.status, sv.header, sv.body = do(t, srv, c)
				checkAnswer(t, c.forServe(), sv.status, sv.header, sv.body)
				if d := sameAnswer(wd, sv, c.serve == ""); d != "" {
					t.Errorf("%s %s: workerd and serve differ: %s", c.method, c.target, d)
				}
			}
		})
	}

	// The 40 sample tasks, by GET and POST: what `caskg query --json` prints, byte for byte.
	g, err := graphs.Decode(testlib.Sample(t))
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(g)
	t.Run("sample tasks", func(t *testing.T) {
		for _, task := range sampleTasks(t) {
			want := nativeJSON(t, eng, task)
			for _, c := range retrieveCases(task) {
				if status, _, body := do(t, base, c); status != 200 || string(body) != want {
					t.Errorf("%s: %d %s\nnative %s", c.name, status, body, want)
				}
			}
		}
	})

	// A URL Go cannot parse fails in syumai/workers before the handler; entry.mjs answers it.
	t.Run("malformed URL", func(t *testing.T) {
		c := apiCase{method: "GET", target: "/v1/skills/%zz", status: 400, want: `{"error":"worker: malformed percent-encoding in the URL path`}
		status, h, body := doRaw(t, base, c.target)
		checkAnswer(t, c, status, h, body)
	})

	// Concurrent requests share the isolate's one program.
	t.Run("concurrent", func(t *testing.T) {
		tasks := sampleTasks(t)[:8]
		got := make([]string, len(tasks))
		var wg sync.WaitGroup
		for i, task := range tasks {
			wg.Go(func() {
				status, _, body := do(t, base, retrieveCases(task)[0])
				got[i] = strconv.Itoa(status) + " " + string(body)
			})
		}
		wg.Wait()
		for i, task := range tasks {
			if want := "200 " + nativeJSON(t, eng, task); got[i] != want {
				t.Errorf("%s: %s\nwant %s", task.ID, got[i], want)
			}
		}
	})
}

// With a KV namespace bound as CASKG_FEEDBACK (workerd.capnp's feedback config: a writable
// directory stands in for the namespace), POST /v1/feedback stores each report as one entry,
// keyed fb-<time>-<random>, holding caskg serve's trace line; refused reports store nothing.
func TestWorkerdFeedback(t *testing.T) {
	kvDir := t.TempDir()
	// The feedback config binds the secret from workerd's environment (fromEnvironment).
	t.Setenv(FeedbackTokens, "alice alice-0123456789abcdef; bob bob-0123456789abcdef")
	base := startWorkerd(t, "feedback", "--directory-path", "feedback-kv="+kvDir)
	json := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer alice-0123456789abcdef"}
	reports := []apiCase{
		{method: "POST", target: "/v1/feedback", header: json, status: 200, want: `{"status":"recorded"}`,
			body: `{"query":"heat some egg","used":["heat-object-in-microwave","pick-up-object"],"outcome":"success"}`},
		{method: "POST", target: "/v1/feedback", header: json, status: 200, want: `{"status":"recorded"}`,
			body: `{"query":"cool a tomato","used":["cool-object-in-fridge"]}`},
		{method: "POST", target: "/v1/feedback", header: json, status: 400, want: `not skills of this artifact`,
			body: `{"query":"fly","used":["fly-to-the-moon"]}`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Authorization": json["Authorization"]}, status: 415,
			want: `feedback takes application/json`, body: `{"query":"heat some egg","used":["heat-object-in-microwave"]}`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Content-Type": "application/json"}, status: 401,
			want: `feedback needs a bearer token`, body: `{"query":"heat some egg","used":["heat-object-in-microwave"]}`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer bob-0123456789abcdeF"},
			status: 401, want: `not one of this server's feedback tokens`, body: `{"query":"heat some egg","used":["heat-object-in-microwave"]}`},
	}
	for _, c := range reports {
		status, h, body := do(t, base, c)
		checkAnswer(t, c, status, h, body)
	}
	entries, err := os.ReadDir(kvDir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if !keyPattern.MatchString(e.Name()) {
			t.Errorf("KV key %q, want fb-<time>-<16 hex digits>", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(kvDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		// The query is not stored: the config does not opt in (CASKG_FEEDBACK_QUERY_TEXT).
		lines = append(lines, strings.Replace(string(b), e.Name(), "KEY", 1))
	}
	slices.Sort(lines)
	want := []string{
		`{"id":"KEY","skills":["cool-object-in-fridge"],"source":"token:alice"}` + "\n",
		`{"id":"KEY","skills":["heat-object-in-microwave","pick-up-object"],"outcome":"success","source":"token:alice"}` + "\n",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("KV entries %q, want %q", lines, want)
	}
}

// A worker whose artifact does not decode answers every request with a 500 naming the problem.
func TestWorkerdBadArtifact(t *testing.T) {
	src := bundleDir(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"app.wasm", "wasm_exec.js", "entry.mjs", "workerd.capnp", "artifact.mjs", "assets/caskg.skg"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "assets/caskg.skg" {
			b[len(b)-1] ^= 1
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := serveBundle(t, dir, "config")
	for range 2 {
		c := apiCase{method: "GET", target: "/v1/health", status: 500,
			want: `{"error":"worker: artifact: graphs: artifact checksum mismatch: header says `}
		status, h, body := do(t, base, c)
		checkAnswer(t, c, status, h, body)
	}
}

// BenchmarkWorker measures the worker under workerd beside caskg serve (native/serve, Go's
// net/http) and, when CASKG_BENCH_OLD_WORKER names its bundle, beside the worker as it was
// (make bench-worker builds it from OLD_WORKER_REF): for each, the cold start (workerd's start
// to the first answer, the isolate's Go start and artifact read included) and the p50 and p99
// latency of b.N sequential loopback requests, GET /v1/retrieve (the sample tasks in turn,
// k = 10) and MCP tools/call retrieve_skills (render false). CASKG_BENCH_WORKER and
// CASKG_BENCH_ARTIFACT name the bundle and artifact make bench-worker built (the 859 skills);
// without them the test's bundle of the sample. Run with -benchtime 1000x.
func BenchmarkWorker(b *testing.B) {
	tasks := sampleTasks(b)
	newDir, artifact := os.Getenv("CASKG_BENCH_WORKER"), os.Getenv("CASKG_BENCH_ARTIFACT")
	if newDir == "" {
		newDir = bundleDir(b)
	}
	type host struct {
		name, dir string
		mcp       bool
	}
	hosts := []host{{"worker", newDir, true}, {"serve", "", false}}
	if old := os.Getenv("CASKG_BENCH_OLD_WORKER"); old != "" {
		hosts = append(hosts, host{"old-worker", old, false})
	}
	for _, h := range hosts {
		b.Run(h.name, func(b *testing.B) {
			t0 := time.Now()
			var base string
			if h.dir == "" {
				base = startServeArtifact(b, artifact)
			} else {
				base = serveBundle(b, h.dir, "config")
			}
			if status, _, body := do(b, base, apiCase{method: "GET", target: "/v1/retrieve?k=10&q=" + url.QueryEscape(tasks[0].Query)}); status != 200 {
				b.Fatalf("first request: %d %s", status, body)
			}
			cold := time.Since(t0)
			measure := func(metric string, c func(i int) apiCase) {
				lat := make([]time.Duration, 0, b.N)
				for i := range b.N {
					t0 := time.Now()
					status, _, body := do(b, base, c(i))
					lat = append(lat, time.Since(t0))
					if status != 200 {
						b.Fatalf("%d %s", status, body)
					}
				}
				slices.Sort(lat)
				ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
				b.ReportMetric(ms(0.50), metric+"-p50-ms")
				b.ReportMetric(ms(0.99), metric+"-p99-ms")
			}
			b.ResetTimer()
			measure("retrieve", func(i int) apiCase {
				return apiCase{method: "GET", target: "/v1/retrieve?k=10&q=" + url.QueryEscape(tasks[i%len(tasks)].Query)}
			})
			b.ReportMetric(float64(cold)/1e6, "cold-ms")
			if h.mcp {
				measure("mcp", func(i int) apiCase {
					q := string(jsontextString(tasks[i%len(tasks)].Query))
					return apiCase{method: "POST", target: "/mcp", header: map[string]string{"Content-Type": "application/json",
						"Accept": "application/json, text/event-stream"},
						body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"retrieve_skills","arguments":{"query":` + q + `,"k":10,"render":false}}}`}
				})
			}
		})
	}
}

// startNative serves the handler with Go's net/http on 127.0.0.1.
func startNative(tb testing.TB) string {
	srv := httptest.NewServer(sampleServer(tb))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// doRaw sends GET target as written, for targets Go's client refuses to send.
func doRaw(tb testing.TB, base, target string) (int, http.Header, []byte) {
	tb.Helper()
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		tb.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		tb.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: reading the body: %v", target, err)
	}
	return resp.StatusCode, resp.Header, b
}
