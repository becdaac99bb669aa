package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
)

func TestInfo(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	p, err := host.Load(ctx, wasmBytes(t), fx.artifact, &host.Options{Cache: sharedCache()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	maj, mnr := fx.graph.Version()
	got := p.Info()
	want := host.Info{
		Skills: fx.graph.NumSkills(), Edges: fx.graph.NumEdges(), Terms: fx.graph.NumTerms(),
		Bytes: len(fx.artifact), Format: formatOf(maj, mnr), Params: fx.graph.Params(),
		Module: host.Version{Version: engine.Version, Format: formatOf(graphs.Major, graphs.Minor), Go: got.Module.Go},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.Module.Go, "go1.") {
		t.Errorf("module built with %q, want a Go release", got.Module.Go)
	}
}

func formatOf(major, minor int) string {
	b, _ := json.Marshal([]int{major, minor})
	return strings.Trim(strings.ReplaceAll(string(b), ",", "."), "[]")
}

func TestErrors(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	m := compile(t, host.Options{Instances: 1})

	t.Run("bad artifacts", func(t *testing.T) {
		for _, tt := range testlib.BadArtifacts(fx.artifact) {
			_, err := m.Load(ctx, tt.Data)
			var me *host.Error
			if !errors.As(err, &me) || !strings.HasPrefix(me.Msg, tt.Err.Error()) {
				t.Errorf("%s: Load error = %v, want the module's %q", tt.Name, err, tt.Err)
			}
		}
	})

	p, err := m.Load(ctx, fx.artifact)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	// refusal is the message of QueryJSON's error for the request req.
	refusal := func(req string) string {
		_, err := p.QueryJSON(ctx, []byte(req))
		var me *host.Error
		if !errors.As(err, &me) {
			return fmt.Sprintf("not a host.Error: %v", err)
		}
		return me.Msg
	}
	table.Run(t, "QueryJSON", refusal, []table.Case[string, string]{
		{"empty query", `{"query":""}`, "engine: empty query"},
		{"k out of range", `{"query":"egg","k":5000}`, `engine: field "k": 5000 is outside [1, 1000]`},
		{"misspelt option", `{"query":"egg","no-graph":true}`, `reactor: request: json at offset 15: field "no-graph": unknown field`},
		{"wrong type", `{"query":"egg","k":"3"}`, `reactor: request: json at offset 19: field "k": want a number, got a string`},
		{"not JSON", `query=egg`, `reactor: request: json at offset 0: want an object, got 'q'`},
		{"trailing data", `{"query":"egg"} {}`, `reactor: request: json at offset 16: data after the JSON value`},
	})
	// The instance that refused the requests still answers.
	if _, err := p.Query(ctx, engine.Request{Query: "heat some egg"}); err != nil {
		t.Errorf("after refusals: %v", err)
	}
}

func TestNotAReactor(t *testing.T) {
	// A valid module without the reactor's exports: just the header and an empty type section.
	empty := []byte("\x00asm\x01\x00\x00\x00")
	_, err := host.Compile(context.Background(), empty, nil)
	if err == nil || !strings.Contains(err.Error(), `does not export "_initialize"`) {
		t.Errorf("Compile(empty module) error = %v, want a missing export", err)
	}
}

// Concurrent callers share a pool smaller than their number and all get the native answers.
func TestConcurrentQueries(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	p := load(t, host.Options{Instances: 3}, fx.artifact)
	native := engine.New(fx.graph)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(fx.tasks); i += 8 {
				req := engine.Request{Query: fx.tasks[i].Query, K: 5}
				want, _ := native.Query(req)
				got, err := p.Query(ctx, req)
				if err != nil {
					errs <- err
					return
				}
				for j := range want.Results {
					want.Results[j].ID = 0 // not part of the JSON
				}
				if diff := cmp.Diff(want, got); diff != "" {
					errs <- errors.New("task " + fx.tasks[i].ID + " (-native +wazero):\n" + diff)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// longQuery is a query of about 64 KB of unknown words, each matched against the lexicon for
// typos: the slowest request there is.
func longQuery() engine.Request {
	words := make([]string, 0, 10000)
	for i := range cap(words) {
		words = append(words, "qz"+strings.Repeat(string(rune('a'+i%26)), 3+i%5)+string(rune('a'+i/26%26)))
	}
	return engine.Request{Query: strings.Join(words, " ")[:engine.MaxQueryBytes-1]}
}

// With Interruptible, a call whose context ends is cut short, its instance discarded, and the
// next call served by a fresh one.
func TestContextCancellation(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	p := load(t, host.Options{Instances: 1, Interruptible: true}, fx.artifact)
	long := longQuery()
	start := time.Now()
	if _, err := p.Query(ctx, long); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	if full < 20*time.Millisecond {
		t.Skipf("the long query takes only %v here; too quick to interrupt reliably", full)
	}

	cctx, cancel := context.WithTimeout(ctx, full/10)
	defer cancel()
	start = time.Now()
	if _, err := p.Query(cctx, long); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("query past its deadline: error = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > full/2+10*time.Millisecond {
		t.Errorf("the cancelled query took %v of the full %v: not cut short", took, full)
	}
	if _, err := p.Query(ctx, engine.Request{Query: "heat some egg"}); err != nil {
		t.Errorf("after a cancelled call: %v", err)
	}
}

// Without Interruptible, an ended context keeps calls from starting; a call that has started
// finishes.
func TestContextNotInterruptible(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	p := load(t, host.Options{Instances: 1}, fx.artifact)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Query(cctx, engine.Request{Query: "egg"}); !errors.Is(err, context.Canceled) {
		t.Errorf("query with a cancelled context: error = %v, want context.Canceled", err)
	}
	if _, err := compile(t, host.Options{}).Load(cctx, fx.artifact); !errors.Is(err, context.Canceled) {
		t.Errorf("load with a cancelled context: error = %v, want context.Canceled", err)
	}
	want, err := p.Query(ctx, longQuery())
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel = context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	resp, err := p.Query(cctx, longQuery())
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("long query with a short deadline: %v", err)
	}
	if diff := cmp.Diff(want, resp); err == nil && diff != "" {
		t.Errorf("long query with a short deadline answered differently (-want +got):\n%s", diff)
	}
	if _, err := p.Query(ctx, engine.Request{Query: "heat some egg"}); err != nil {
		t.Errorf("afterwards: %v", err)
	}
}

// An instance that runs out of its memory limit fails the call, not the host.
func TestMemoryLimit(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	// Enough for the Go runtime to start, too little to hold a 40 MB artifact.
	m := compile(t, host.Options{Instances: 1, MemoryLimitPages: 512})
	big := make([]byte, 40<<20)
	copy(big, fx.artifact)
	_, err := m.Load(ctx, big)
	if err == nil || errors.As(err, new(*host.Error)) {
		t.Fatalf("loading 40 MB under a 32 MB limit: error = %v, want a host failure", err)
	}
	t.Logf("as expected: %v", err)
	if !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("error %q does not say memory ran out", err)
	}
	// The same module still loads what fits.
	p, err := m.Load(ctx, fx.artifact)
	if err != nil {
		t.Fatalf("after running out of memory: %v", err)
	}
	p.Close(ctx)
}

func TestClose(t *testing.T) {
	fx := need(t, sampleFixture, "")
	ctx := context.Background()
	p := load(t, host.Options{}, fx.artifact)
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Query(ctx, engine.Request{Query: "egg"}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("query after Close: error = %v, want pool closed", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
