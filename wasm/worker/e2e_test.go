package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/mcphttp"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// The end-to-end test builds the worker as make worker does, serves it with workerd on
// 127.0.0.1 and sends it the handler's cases, the 40 sample tasks and bad requests.

// bundleDir, startWorkerd and serveBundle are wasm/testlib's, for the sample.
func bundleDir(tb testing.TB) string { return testlib.WorkerBundle(tb) }

func startWorkerd(tb testing.TB, config string, args ...string) string {
	return testlib.StartWorkerd(tb, config, args...)
}

func serveBundle(tb testing.TB, dir, config string, args ...string) string {
	return testlib.ServeWorker(tb, dir, config, args...)
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
	g := testlib.Decode(t, testlib.Sample(t))
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

// bundleWith is a copy of the test's bundle with asset as its artifact, artifact.mjs unchanged.
func bundleWith(t *testing.T, asset []byte) string {
	src, dir := bundleDir(t), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"app.wasm", "wasm_exec.js", "entry.mjs", "workerd.capnp", "artifact.mjs", "assets/caskg.skg"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "assets/caskg.skg" {
			b = asset
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A worker whose artifact does not decode answers every request with a 500 naming the problem.
func TestWorkerdBadArtifact(t *testing.T) {
	data := bytes.Clone(testlib.Sample(t))
	data[len(data)-1] ^= 1
	base := serveBundle(t, bundleWith(t, data), "config")
	for range 2 {
		c := apiCase{method: "GET", target: "/v1/health", status: 500,
			want: `{"error":"worker: artifact: graphs: artifact checksum mismatch: header says `}
		status, h, body := do(t, base, c)
		checkAnswer(t, c, status, h, body)
	}
}

// BenchmarkWorker measures the worker under workerd beside caskg serve (native/serve, Go's
// net/http) and caskg mcp --http (native/internal/mcpserver, the Go SDK): for each, the cold start (the
// host's start to its first answer; for the worker the isolate's Go start and artifact read
// included) and the p50 and p99 latency of b.N sequential loopback requests, GET /v1/retrieve
// (the sample tasks in turn, k = 10) where the host has the API, and MCP tools/call
// retrieve_skills (render false) where it has /mcp. CASKG_BENCH_WORKER and
// CASKG_BENCH_ARTIFACT name the bundle and artifact make bench-worker built (the 859 skills);
// without them the test's bundle of the sample. Run with -benchtime 1000x.
func BenchmarkWorker(b *testing.B) {
	tasks := sampleTasks(b)
	bundle, artifact := os.Getenv("CASKG_BENCH_WORKER"), os.Getenv("CASKG_BENCH_ARTIFACT")
	if bundle == "" {
		bundle = bundleDir(b)
	}
	type host struct {
		name, dir string
		api, mcp  bool
	}
	// serve and mcp are caskg serve and caskg mcp --http, in this process.
	hosts := []host{{"worker", bundle, true, true}, {"serve", "", true, false}, {"mcp", "", false, true}}
	for _, h := range hosts {
		b.Run(h.name, func(b *testing.B) {
			t0 := time.Now()
			var base string
			mcpHeader := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			switch {
			case h.dir != "":
				base = serveBundle(b, h.dir, "config")
			case h.api:
				base = startServeArtifact(b, artifact)
			default:
				base = startMCPHTTP(b, artifact)
			}
			if h.api {
				if status, _, body := do(b, base, apiCase{method: "GET", target: "/v1/retrieve?k=10&q=" + url.QueryEscape(tasks[0].Query)}); status != 200 {
					b.Fatalf("first request: %d %s", status, body)
				}
			}
			if h.mcp {
				// A session, as a client opens one; the worker is stateless and names none.
				status, hd, body := do(b, base, apiCase{method: "POST", target: "/mcp", header: mcpHeader,
					body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`})
				if status != 200 {
					b.Fatalf("initialize: %d %s", status, body)
				}
				if id := hd.Get("Mcp-Session-Id"); id != "" {
					mcpHeader["Mcp-Session-Id"] = id
				}
				do(b, base, apiCase{method: "POST", target: "/mcp", header: mcpHeader, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
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
			if h.api {
				measure("retrieve", func(i int) apiCase {
					return apiCase{method: "GET", target: "/v1/retrieve?k=10&q=" + url.QueryEscape(tasks[i%len(tasks)].Query)}
				})
			}
			b.ReportMetric(float64(cold)/1e6, "cold-ms")
			if h.mcp {
				measure("mcp", func(i int) apiCase {
					q := string(jsontextString(tasks[i%len(tasks)].Query))
					return apiCase{method: "POST", target: "/mcp", header: mcpHeader,
						body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"retrieve_skills","arguments":{"query":` + q + `,"k":10,"render":false}}}`}
				})
			}
		})
	}
}

// startMCPHTTP serves the artifact's tools as caskg mcp --http does (native/internal/mcpserver, the Go
// SDK's streamable HTTP with sessions), the sample's when art is "".
func startMCPHTTP(tb testing.TB, art string) string {
	tb.Helper()
	data := testlib.Sample(tb)
	if art != "" {
		var err error
		if data, err = os.ReadFile(art); err != nil {
			tb.Fatal(err)
		}
	}
	g := testlib.Decode(tb, data)
	return mcphttp.ServeGraph(tb, g, engine.Version)
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
