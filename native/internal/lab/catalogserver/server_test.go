package catalogserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/lab/catalogserver"
	"github.com/caskg/caskg/native/testlib"
)

const sharedData = "../../../../../shared/data/eval"

func devCatalog(tb testing.TB, set string) *catalogserver.Catalog {
	tb.Helper()
	file := sharedData + "/" + set + "/tools.json"
	if _, err := os.Stat(file); err != nil {
		tb.Skipf("dev set not available: %v", err)
	}
	c, err := catalogserver.Load(file)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// connect serves c in process and returns a client session of the official SDK on it.
func connect(tb testing.TB, c *catalogserver.Catalog, opt catalogserver.Options) *mcp.ClientSession {
	tb.Helper()
	s, err := catalogserver.NewServer(c, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return testlib.InMemory(tb, ctxT(tb), s)
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// TestDevSets lists every tool of each dev set page by page and calls a sample with
// arguments made from their schemas.
func TestDevSets(t *testing.T) {
	for _, set := range []string{"toollinkos", "sealtools", "nestful"} {
		t.Run(set, func(t *testing.T) {
			c := devCatalog(t, set)
			cs := connect(t, c, catalogserver.Options{})
			ctx := ctxT(t)

			// Follow the cursors by hand, to see the pages.
			var listed []*mcp.Tool
			pages := 0
			params := &mcp.ListToolsParams{}
			for {
				res, err := cs.ListTools(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(res.Tools) > catalogserver.DefaultPageSize {
					t.Fatalf("page of %d tools", len(res.Tools))
				}
				listed = append(listed, res.Tools...)
				if res.NextCursor == "" {
					break
				}
				if pages > len(c.Tools) {
					t.Fatal("the cursors do not end")
				}
				params.Cursor = res.NextCursor
			}
			if want := (len(c.Tools) + catalogserver.DefaultPageSize - 1) / catalogserver.DefaultPageSize; pages != want {
				t.Errorf("%d pages, want %d", pages, want)
			}
			// Every tool, once, as the file gives it.
			byName := map[string]*mcp.Tool{}
			for _, tl := range listed {
				if byName[tl.Name] != nil {
					t.Errorf("%s listed twice", tl.Name)
				}
				byName[tl.Name] = tl
			}
			if len(byName) != len(c.Tools) {
				t.Errorf("%d tools listed, want %d", len(byName), len(c.Tools))
			}
			for _, want := range c.Tools {
				got := byName[want.Name]
				if got == nil {
					t.Errorf("%s not listed", want.Name)
					continue
				}
				if w, g := jsonOf(t, want), jsonOf(t, got); w != g {
					t.Errorf("%s listed differently:\nfile   %s\nlisted %s", want.Name, w, g)
				}
			}

			// A sample of calls, spread over the catalog.
			step := max(len(c.Tools)/60, 1)
			for i := 0; i < len(c.Tools); i += step {
				tl := byName[c.Tools[i].Name]
				args := catalogserver.ExampleArgs(tl.InputSchema)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tl.Name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", tl.Name, err)
				}
				if res.IsError {
					t.Errorf("%s%v: tool error %s", tl.Name, args, testlib.ToolText(res))
					continue
				}
				if tl.OutputSchema == nil {
					if !strings.HasPrefix(testlib.ToolText(res), tl.Name+" called with {") || res.StructuredContent != nil {
						t.Errorf("%s: text %q, structured %v", tl.Name, testlib.ToolText(res), res.StructuredContent)
					}
					continue
				}
				sc, ok := res.StructuredContent.(map[string]any)
				if !ok {
					t.Errorf("%s: structured content %T", tl.Name, res.StructuredContent)
					continue
				}
				// Every property the output schema names has a value, and the text is the same JSON.
				props, _ := tl.OutputSchema.(map[string]any)["properties"].(map[string]any)
				for p := range props {
					if _, ok := sc[p]; !ok {
						t.Errorf("%s: result has no %q", tl.Name, p)
					}
				}
				var fromText any
				if err := json.Unmarshal([]byte(testlib.ToolText(res)), &fromText); err != nil || !cmp.Equal(fromText, any(sc)) {
					t.Errorf("%s: text %q is not the structured content", tl.Name, testlib.ToolText(res))
				}
			}
		})
	}
}

// jsonOf is v's JSON; maps encode with sorted keys, so equal values give equal text.
func jsonOf(tb testing.TB, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

const tinyCatalog = `{"tools": [
 {"name": "book", "description": "Book a flight.", "inputSchema": {"type": "object", "required": ["flight", "seats"],
  "properties": {"flight": {"type": "string"}, "seats": {"type": "int"}, "class": {"enum": ["economy", "business"]},
   "extras": {"type": "list", "items": {"type": "string"}}}},
  "outputSchema": {"type": "object", "properties": {"booking_id": {"type": "string"}, "price": {"type": "number", "minimum": 0},
   "confirmed": {"type": "boolean"}}}},
 {"name": "ping", "description": "Answer.", "inputSchema": {"type": "object"}},
 {"name": "odd name!", "description": "Not a valid MCP tool name.", "inputSchema": {"type": "object"}}
]}`

func tiny(tb testing.TB) *catalogserver.Catalog {
	c, err := catalogserver.Parse([]byte(tinyCatalog), "tiny.json")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestCallErrors(t *testing.T) {
	cs := connect(t, tiny(t), catalogserver.Options{})
	tests := []struct {
		name string
		tool string
		args any
		want string // the tool error; "" for success
	}{
		{"valid", "book", map[string]any{"flight": "LH1", "seats": 2}, ""},
		{"valid all", "book", map[string]any{"flight": "LH1", "seats": 2, "class": "business", "extras": []string{"meal"}}, ""},
		{"missing", "book", map[string]any{"flight": "LH1"}, `catalogserver: tool book: argument "seats": missing (required)`},
		{"no arguments", "book", nil, `argument "flight": missing (required)`},
		{"wrong type", "book", map[string]any{"flight": "LH1", "seats": "two"}, `argument "seats": want integer, got string`},
		{"enum", "book", map[string]any{"flight": "LH1", "seats": 1, "class": "first"}, `argument "class": must be one of ["economy","business"]`},
		{"item", "book", map[string]any{"flight": "LH1", "seats": 1, "extras": []any{1}}, `argument "extras[0]": want string, got integer`},
		{"not an object", "book", []int{1}, "arguments: want an object, got array"},
		{"odd name served", "odd name!", map[string]any{"anything": true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && res.IsError:
				t.Errorf("tool error %q", testlib.ToolText(res))
			case tt.want != "" && (!res.IsError || !strings.Contains(testlib.ToolText(res), tt.want)):
				t.Errorf("result %q (error %v), want error %q", testlib.ToolText(res), res.IsError, tt.want)
			}
		})
	}
	if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

// TestDeterministic: the same call gets the same bytes, from one server and from another;
// other arguments get another result.
func TestDeterministic(t *testing.T) {
	c := tiny(t)
	a, b := connect(t, c, catalogserver.Options{}), connect(t, c, catalogserver.Options{})
	call := func(cs *mcp.ClientSession, tool string, args any) []byte {
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tool, err, testlib.ToolText(res))
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, tool := range []string{"book", "ping"} {
		args := map[string]any{"flight": "LH1", "seats": 2, "class": "economy"}
		// Key order does not matter: the arguments are one JSON object either way.
		reordered := json.RawMessage(`{"seats": 2, "class": "economy", "flight": "LH1"}`)
		first := call(a, tool, args)
		for _, got := range [][]byte{call(a, tool, args), call(b, tool, args), call(b, tool, reordered)} {
			if string(got) != string(first) {
				t.Errorf("%s: %s, then %s", tool, first, got)
			}
		}
		other := call(a, tool, map[string]any{"flight": "LH2", "seats": 2})
		if string(other) == string(first) {
			t.Errorf("%s: other arguments, same result %s", tool, first)
		}
	}
}

// TestFailRates: each kind of simulated failure hits about its share of distinct calls, and a
// call that fails fails every time.
func TestFailRates(t *testing.T) {
	tests := []struct {
		name string
		opt  catalogserver.Options
		rpc  bool
	}{
		{"tool errors", catalogserver.Options{FailRate: 0.25}, false},
		{"JSON-RPC errors", catalogserver.Options{RPCFailRate: 0.25}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := connect(t, tiny(t), tt.opt)
			const n = 200
			failed := 0
			for i := range n {
				args := map[string]any{"flight": fmt.Sprintf("LH%d", i), "seats": 1}
				outcome := func() bool {
					res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "book", Arguments: args})
					var rpcErr *jsonrpc.Error
					switch {
					case err != nil && tt.rpc && errors.As(err, &rpcErr) && strings.Contains(rpcErr.Message, "catalogserver: tool book: simulated failure"):
						return true
					case err != nil:
						t.Fatal(err)
					case res.IsError && (tt.rpc || !strings.Contains(testlib.ToolText(res), "catalogserver: tool book: simulated failure")):
						t.Fatalf("error %q", testlib.ToolText(res))
					}
					return res.IsError
				}
				first := outcome()
				if outcome() != first {
					t.Fatalf("%v: fails once, not twice", args)
				}
				if first {
					failed++
				}
			}
			// 200 draws at 0.25: the count lies within 30..70 unless the hash is badly skewed.
			if failed < 30 || failed > 70 {
				t.Errorf("%d of %d calls failed at rate 0.25", failed, n)
			}
		})
	}
}

// TestDelayCancels: a call waiting out its delay ends when the client gives up.
func TestDelayCancels(t *testing.T) {
	cs := connect(t, tiny(t), catalogserver.Options{Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err == nil {
		t.Error("a call delayed an hour answered")
	}
}

func TestNewServerOptions(t *testing.T) {
	c := tiny(t)
	// A tool the SDK's AddTool panics on is an error instead.
	refused, err := catalogserver.Parse([]byte(`[{"name": "h", "inputSchema": {"type": "object",
		"properties": {"p": {"type": "array", "x-mcp-header": "P"}}}}]`), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  catalogserver.Options
		c    *catalogserver.Catalog
		err  string
	}{
		{"page size", catalogserver.Options{PageSize: -1}, c, "catalogserver: page size -1 is negative"},
		{"delay", catalogserver.Options{Delay: -1}, c, "catalogserver: delay -1ns is negative"},
		{"fail rate", catalogserver.Options{FailRate: 1.5}, c, "catalogserver: fail rate 1.5 is not between 0 and 1"},
		{"RPC fail rate", catalogserver.Options{RPCFailRate: -0.1}, c, "catalogserver: RPC fail rate -0.1 is not between 0 and 1"},
		{"no tools", catalogserver.Options{}, &catalogserver.Catalog{}, "catalogserver: no tools to serve"},
		{"refused by the SDK", catalogserver.Options{}, refused, `catalogserver: tool "h": the SDK refuses it: AddTool "h": ` +
			`invalid parameter header annotations: property "p": x-mcp-header can only be applied to primitive types ` +
			`(integer, string, boolean), got "array"`},
	}
	for _, tt := range tests {
		if _, err := catalogserver.NewServer(tt.c, tt.opt); err == nil || err.Error() != tt.err {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestPageSize(t *testing.T) {
	cs := connect(t, tiny(t), catalogserver.Options{PageSize: 1})
	var names []string
	for tl, err := range cs.Tools(ctxT(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	if want := []string{"book", "odd name!", "ping"}; !cmp.Equal(names, want) {
		t.Errorf("listed %v, want %v", names, want)
	}
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil || len(res.Tools) != 1 || res.NextCursor == "" {
		t.Errorf("first page %v %v, want one tool and a cursor", res, err)
	}
}

// TestConcurrentCalls: calls in flight together get the answers they get alone.
func TestConcurrentCalls(t *testing.T) {
	cs := connect(t, tiny(t), catalogserver.Options{})
	const n = 16
	answers := make(chan string, n)
	for i := range n {
		go func() {
			args := map[string]any{"flight": fmt.Sprintf("LH%d", i%4), "seats": 1}
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "book", Arguments: args})
			if err != nil || res.IsError {
				answers <- fmt.Sprintf("error %v %v", err, res)
				return
			}
			answers <- fmt.Sprintf("%d %s", i%4, testlib.ToolText(res))
		}()
	}
	seen := map[string]bool{}
	for range n {
		a := <-answers
		if strings.HasPrefix(a, "error") {
			t.Fatal(a)
		}
		seen[a] = true
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct answers to 4 distinct calls made 4 times each: %v", len(seen), seen)
	}
}
