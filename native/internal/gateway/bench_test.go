package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/lab/catalogserver"
	"github.com/caskg/caskg/native/testlib"
)

// The benchmarks of the gateway's targets (native/lab/internal/bench/gateway.go): what a
// proxied call adds over a direct one, and search_tools on the 4,076 tools of Seal-Tools. make
// bench-gateway runs them and writes their table into docs/benchmarks.md; they skip when the shared
// data is missing.

const sealTools = "../../../../shared/data/eval/sealtools"

// benchCalls is how many distinct tools the call benchmarks cycle through.
const benchCalls = 16

// sealCatalog loads Seal-Tools' catalog and returns its file's absolute path with it; tb skips
// when the shared data is missing.
func sealCatalog(tb testing.TB) (string, *catalogserver.Catalog) {
	tb.Helper()
	file := filepath.Join(sealTools, "tools.json")
	if _, err := os.Stat(file); err != nil {
		tb.Skipf("shared data missing: %v", err)
	}
	c, err := catalogserver.Load(file)
	if err != nil {
		tb.Fatal(err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		tb.Fatal(err)
	}
	return abs, c
}

// catalogServerBin is the catalog-server command, built into a temporary folder (the build
// cache makes this quick after the first time).
func catalogServerBin(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "catalog-server")
	cmd := exec.Command("go", "build", "-o", out, "github.com/caskg/caskg/native/lab/cmd/catalog-server")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build catalog-server: %v\n%s", err, msg)
	}
	return out
}

// latencies collects one duration per iteration and reports percentiles.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(p*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// benchCtx bounds a benchmark's setup and every call in it.
func benchCtx(b *testing.B) context.Context {
	ctx := testContext(b, 10*time.Minute)
	return ctx
}

type benchCall struct {
	tool string
	args map[string]any
}

// sealCalls are calls of the first Seal-Tools tools with an output schema that the server
// answers without error, checked on the direct session.
func sealCalls(b *testing.B, ctx context.Context, c *catalogserver.Catalog, direct *mcp.ClientSession) []benchCall {
	b.Helper()
	var calls []benchCall
	for _, t := range c.Tools {
		if len(calls) == benchCalls {
			break
		}
		if t.OutputSchema == nil {
			continue
		}
		args := catalogserver.ExampleArgs(t.InputSchema)
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: args})
		if err != nil || res.IsError {
			continue
		}
		calls = append(calls, benchCall{t.Name, args})
	}
	if len(calls) == 0 {
		b.Fatal("no Seal-Tools tool answers its example arguments")
	}
	return calls
}

func benchClient(b *testing.B, ctx context.Context, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func benchGateway(b *testing.B, ctx context.Context, cfg *Config, opt Options) *Gateway {
	b.Helper()
	g, err := New(cfg, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	if err := g.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkProxiedCall times one tools/call of a Seal-Tools tool on the catalog server straight
// from a client, and the same call through the gateway's call_tool, interleaved (the order
// alternating) so that both see the same machine. Over stdio the catalog server is a child
// process both of the client's and of the gateway's, and the front is ServeStdio over OS
// pipes; over HTTP the catalog server listens on loopback (streamable HTTP), and so does the
// gateway's front (Handler). Each reports the p50 and p99 of both and what the gateway adds
// (p50 minus p50, p99 minus p99); ns/op is the two calls together.
func BenchmarkProxiedCall(b *testing.B) {
	file, c := sealCatalog(b)
	bin := catalogServerBin(b)
	b.Run("stdio", func(b *testing.B) {
		ctx := benchCtx(b)
		direct := benchClient(b, ctx, &mcp.CommandTransport{Command: exec.Command(bin, "--tools", file)})
		cfg := &Config{Servers: []ServerConfig{{Name: "seal", Command: bin, Args: []string{"--tools", file}, Timeout: time.Minute}}}
		g := benchGateway(b, ctx, cfg, Options{})
		toGW, fromClient := pipe(b)
		toClient, fromGW := pipe(b)
		go g.ServeStdio(ctx, toGW, fromGW)
		front := benchClient(b, ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient})
		compareCalls(b, ctx, c, direct, front)
	})
	b.Run("http", func(b *testing.B) {
		ctx := benchCtx(b)
		url := startHTTPCatalog(b, bin, file)
		direct := benchClient(b, ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
		g := benchGateway(b, ctx, &Config{Servers: []ServerConfig{{Name: "seal", URL: url, Timeout: time.Minute}}}, Options{})
		ts := httptest.NewServer(g.Handler())
		b.Cleanup(ts.Close)
		front := benchClient(b, ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1})
		compareCalls(b, ctx, c, direct, front)
	})
}

func compareCalls(b *testing.B, ctx context.Context, c *catalogserver.Catalog, direct, front *mcp.ClientSession) {
	calls := sealCalls(b, ctx, c, direct)
	do := func(cs *mcp.ClientSession, params *mcp.CallToolParams) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", params.Name, err, res)
		}
		return d
	}
	var dl, gl latencies
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		call := calls[i%len(calls)]
		dp := &mcp.CallToolParams{Name: call.tool, Arguments: call.args}
		gp := &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "seal" + sep + call.tool, "arguments": call.args}}
		if i%2 == 0 {
			dl = append(dl, do(direct, dp))
			gl = append(gl, do(front, gp))
		} else {
			gl = append(gl, do(front, gp))
			dl = append(dl, do(direct, dp))
		}
	}
	b.StopTimer()
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		b.ReportMetric(us(dl.pct(p.q)), "direct-"+p.name+"-us")
		b.ReportMetric(us(gl.pct(p.q)), "gateway-"+p.name+"-us")
		b.ReportMetric(us(gl.pct(p.q)-dl.pct(p.q)), "added-"+p.name+"-us")
	}
}

func pipe(b *testing.B) (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// startHTTPCatalog runs catalog-server --http on a free loopback port and returns its URL.
func startHTTPCatalog(b *testing.B, bin, file string) string {
	b.Helper()
	cmd := exec.Command(bin, "--tools", file, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "listening on "); ok {
				found <- url
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(time.Minute):
		b.Fatal("catalog-server --http did not say where it listens within a minute")
	}
	return ""
}

// sealQueries are the task texts of Seal-Tools.
func sealQueries(b testing.TB) []string {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(sealTools, "tasks.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var qs []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var task struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(line), &task); err != nil {
			b.Fatalf("tasks.jsonl: %v", err)
		}
		qs = append(qs, task.Query)
	}
	return qs
}

// BenchmarkSearchTools times search_tools (default k) on the 4,076 tools of Seal-Tools served
// by the catalog server in process, from a client of the front over in-memory transports:
// the whole request, its result encoded with every tool's input schema, and decoded by the
// client. "graph" ranks over the graph of the learning loop's first full build, "lexical" on
// a gateway without a graph (its fallback). The queries are the data set's task texts in turn.
func BenchmarkSearchTools(b *testing.B) {
	_, c := sealCatalog(b)
	queries := sealQueries(b)
	srv, err := catalogserver.NewServer(c, catalogserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dial := func(ServerConfig) mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			b.Errorf("catalog server: %v", err)
		}
		return ct
	}
	cfg := &Config{Servers: []ServerConfig{{Name: "seal", Command: "unused", Timeout: time.Minute}}}
	for _, ranking := range []string{"graph", "lexical"} {
		b.Run(ranking, func(b *testing.B) {
			ctx := benchCtx(b)
			opt := Options{dial: dial, Logf: b.Logf}
			if ranking == "graph" {
				loop, err := learn.Open(filepath.Join(b.TempDir(), "state"), learn.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { loop.Close(context.Background()) })
				opt.Learner = loop
				g := benchGateway(b, ctx, cfg, opt)
				if err := loop.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				if gr, _ := loop.Graph(); gr == nil {
					b.Fatalf("no graph after the first build: %s", loop.Status().LastError)
				}
				searchLoop(b, ctx, g, queries, ranking)
				return
			}
			searchLoop(b, ctx, benchGateway(b, ctx, cfg, opt), queries, ranking)
		})
	}
}

func searchLoop(b *testing.B, ctx context.Context, g *Gateway, queries []string, ranking string) {
	if n := len(g.cat.Load().entries); n != 4076 {
		b.Fatalf("the gateway has %d tools, want 4076", n)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Connect(ctx, st); err != nil {
		b.Fatal(err)
	}
	front := benchClient(b, ctx, ct)
	search := func(q string) (*mcp.CallToolResult, error) {
		res, err := front.CallTool(ctx, &mcp.CallToolParams{Name: searchTool, Arguments: map[string]any{"query": q}})
		if err == nil && res.IsError {
			err = errors.New(testlib.ToolText(res))
		}
		return res, err
	}
	res, err := search(queries[0])
	if err != nil {
		b.Fatal(err)
	}
	if got := res.StructuredContent.(map[string]any)["ranking"]; got != ranking {
		b.Fatalf("ranking %v, want %s", got, ranking)
	}
	var lat latencies
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := search(queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(us(lat.pct(0.5)), "p50-us")
	b.ReportMetric(us(lat.pct(0.99)), "p99-us")
}
