// Package catalogserver serves a tool catalog file — a data set's tools.json — as a real MCP
// server, so that the gateway, `make eval` and `make bench` can run against thousands of tools
// the way they would against live servers.
//
// The server lists the catalog's tools in pages (clients must follow cursors) and answers
// every call from the tool's schemas alone: the arguments are checked against the input
// schema (a wrong or missing argument is a tool error naming it), and the result is a
// deterministic value of the output schema, or a text echoing the call when the tool has none.
// The same call always gets the same answer. Latency and failures can be simulated, both
// deterministic too.
package catalogserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultPageSize is the tools/list page size when Options.PageSize is 0: small enough that a
// client must follow cursors on every real catalog but the smallest.
const DefaultPageSize = 100

// Options shape a server's behaviour.
type Options struct {
	PageSize int           // tools a tools/list page holds; 0 means DefaultPageSize
	Delay    time.Duration // added before every tools/call answer
	// FailRate is the share of distinct calls that fail with a tool error (isError), chosen
	// by a hash of the tool name and arguments: a call that fails always fails.
	FailRate float64
	// RPCFailRate is the share of distinct calls answered with a JSON-RPC error instead,
	// chosen the same way by another hash (so the two kinds of failure are independent).
	RPCFailRate float64
}

// NewServer returns an MCP server that serves the catalog's tools. The catalog must not be
// changed afterwards.
func NewServer(c *Catalog, opt Options) (*mcp.Server, error) {
	switch {
	case opt.PageSize < 0:
		return nil, fmt.Errorf("catalogserver: page size %d is negative", opt.PageSize)
	case opt.Delay < 0:
		return nil, fmt.Errorf("catalogserver: delay %v is negative", opt.Delay)
	case !(opt.FailRate >= 0 && opt.FailRate <= 1):
		return nil, fmt.Errorf("catalogserver: fail rate %v is not between 0 and 1", opt.FailRate)
	case !(opt.RPCFailRate >= 0 && opt.RPCFailRate <= 1):
		return nil, fmt.Errorf("catalogserver: RPC fail rate %v is not between 0 and 1", opt.RPCFailRate)
	case c == nil || len(c.Tools) == 0:
		return nil, errors.New("catalogserver: no tools to serve")
	}
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "caskg-catalog-server", Version: "0.1.0"},
		&mcp.ServerOptions{PageSize: opt.PageSize})
	for _, t := range c.Tools {
		wire, err := encoded(t)
		if err != nil {
			return nil, err
		}
		if err := addTool(s, wire, handler(t, opt)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addTool adds a tool, turning the SDK's panic on a tool it refuses (x-mcp-header annotations
// it finds invalid; the schema checks it makes cannot fail after Parse) into an error.
func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("catalogserver: tool %q: the SDK refuses it: %v", t.Name, p)
		}
	}()
	s.AddTool(t, h)
	return nil
}

// encoded is t with its schemas encoded once, ahead of time: every tools/list page would
// otherwise encode them again from maps. The bytes are the ones the maps would give.
func encoded(t *mcp.Tool) (*mcp.Tool, error) {
	w := *t
	in, err := marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("catalogserver: tool %q: input schema: %w", t.Name, err)
	}
	w.InputSchema = json.RawMessage(in)
	if t.OutputSchema != nil {
		out, err := marshal(t.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("catalogserver: tool %q: output schema: %w", t.Name, err)
		}
		w.OutputSchema = json.RawMessage(out)
	}
	return &w, nil
}

// handler answers the calls of one tool. The SDK's lower-level AddTool leaves checking and
// result shape to it, which is what lets odd schemas through (see Catalog).
func handler(t *mcp.Tool, opt Options) mcp.ToolHandler {
	in, _ := t.InputSchema.(map[string]any)
	out, _ := t.OutputSchema.(map[string]any)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if opt.Delay > 0 {
			timer := time.NewTimer(opt.Delay)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			}
		}
		return answer(t.Name, in, out, req.Params.Arguments, opt)
	}
}

// answer is the result of calling tool name with raw arguments.
func answer(name string, in, out map[string]any, raw json.RawMessage, opt Options) (*mcp.CallToolResult, error) {
	var args any = map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return toolError(name, "arguments are not valid JSON"), nil
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	if _, ok := args.(map[string]any); !ok {
		return toolError(name, (&argError{"", "want an object, got " + kindOf(args)}).Error()), nil
	}
	if err := validate(in, args, ""); err != nil {
		return toolError(name, err.Error()), nil
	}
	canon, err := marshal(args) // map keys sorted: equal arguments give equal bytes
	if err != nil {
		return toolError(name, err.Error()), nil
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(canon)
	seed := h.Sum64()
	if opt.RPCFailRate > 0 && float64(mix(seed, "rpc"))/math.Exp2(64) < opt.RPCFailRate {
		return nil, fmt.Errorf("catalogserver: tool %s: simulated failure (RPC fail rate %v)", name, opt.RPCFailRate)
	}
	if opt.FailRate > 0 && float64(mix(seed, "fail"))/math.Exp2(64) < opt.FailRate {
		return toolError(name, fmt.Sprintf("simulated failure (fail rate %v)", opt.FailRate)), nil
	}
	if out == nil {
		text := fmt.Sprintf("%s called with %s: ok, result %016x", name, canon, seed)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
	res := result(out, seed)
	text, err := marshal(res)
	if err != nil {
		return toolError(name, err.Error()), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: res}, nil
}

func toolError(name, msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("catalogserver: tool %s: %s", name, msg)}}}
}

// marshal encodes a decoded JSON value without HTML escaping, map keys sorted.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
