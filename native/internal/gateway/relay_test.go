package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/testlib"
)

// askServer is an in-memory downstream that asks its client for things while it serves a
// call, as server-everything's sampling, elicitation and roots tools do, and, like
// server-filesystem, asks for the roots when it starts and when they change.
type askServer struct {
	mu    sync.Mutex
	roots []string // what its last roots/list outside a call gave
	gate  chan struct{}
}

func (a *askServer) known() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.roots)
}

func (a *askServer) server() *mcp.Server {
	var srv *mcp.Server
	fetch := func(ctx context.Context, ss *mcp.ServerSession) {
		go func() {
			res, err := ss.ListRoots(context.WithoutCancel(ctx), nil)
			if err != nil {
				return
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			a.mu.Lock()
			a.roots = uris
			a.mu.Unlock()
		}()
	}
	srv = mcp.NewServer(&mcp.Implementation{Name: "asker"}, &mcp.ServerOptions{
		// Servers ask their clients in-band in the session-based protocol versions, as the
		// reference servers do.
		SupportedProtocolVersions: frontVersions(),
		InitializedHandler:        func(ctx context.Context, r *mcp.InitializedRequest) { fetch(ctx, r.Session) },
		RootsListChangedHandler:   func(ctx context.Context, r *mcp.RootsListChangedRequest) { fetch(ctx, r.Session) },
	})
	ask := func(name string, h func(context.Context, *mcp.CallToolRequest) (string, error)) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				s, err := h(ctx, req)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				return text(s), nil
			})
	}
	ask("sample", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 50,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
		if err != nil {
			return "", err
		}
		return "sampled: " + res.Content.(*mcp.TextContent).Text + " by " + res.Model, nil
	})
	ask("elicit", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: %v", res.Action, res.Content["name"]), nil
	})
	ask("roots", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return "", err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return "roots: " + strings.Join(uris, " "), nil
	})
	ask("log", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "disk", Data: "wrote 3 files"})
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "noise"})
		return "logged", nil
	})
	ask("wait", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		select {
		case <-a.gate:
		case <-ctx.Done():
		}
		return "waited", nil
	})
	return srv
}

// askClient is a front client with every capability a server may ask for, or without
// sampling, elicitation and roots when bare.
type askClient struct {
	cs   *mcp.ClientSession
	logs chan *mcp.LoggingMessageParams
}

func connectAsk(t *testing.T, g *Gateway, bare bool, roots ...string) *askClient {
	t.Helper()
	ac := &askClient{logs: make(chan *mcp.LoggingMessageParams, 100)}
	opt := &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { ac.logs <- r.Params },
	}
	if bare {
		opt.Capabilities = &mcp.ClientCapabilities{}
	} else {
		opt.CreateMessageHandler = func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model",
				Content: &mcp.TextContent{Text: "hi (" + r.Params.Messages[0].Content.(*mcp.TextContent).Text + ")"}}, nil
		}
		opt.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "asking-agent"}, opt)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r})
	}
	ac.cs = connectClient(t, g, client)
	return ac
}

// connectClient connects client to a front session over in-memory transports.
func connectClient(t *testing.T, g *Gateway, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Connect(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (ac *askClient) call(t *testing.T, name string) *mcp.CallToolResult {
	t.Helper()
	ctx := testContext(t, 20*time.Second)
	res, err := ac.cs.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": name}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func askGateway(t *testing.T, a *askServer) *Gateway {
	cfg := &Config{Servers: []ServerConfig{{Name: "ask", Command: "unused", Timeout: 5 * time.Second}}}
	return startGateway(t, cfg, Options{dial: inMemory(t, map[string]func() *mcp.Server{"ask": a.server})})
}

// TestServerRequestsReachTheirClient drives a downstream server's sampling, elicitation and
// roots requests through the gateway to the client whose call caused them, and back.
func TestServerRequestsReachTheirClient(t *testing.T) {
	a := &askServer{gate: make(chan struct{})}
	g := askGateway(t, a)
	full := connectAsk(t, g, false, "file:///work/project")
	bare := connectAsk(t, g, true)
	tests := []struct {
		name    string
		client  *askClient
		tool    string
		want    string // the result's text holds it
		isError bool
	}{
		{"sampling", full, "ask__sample", "sampled: hi (say hi) by test-model", false},
		{"elicitation", full, "ask__elicit", "accept: Ada", false},
		{"roots", full, "ask__roots", "roots: file:///work/project", false},
		{"sampling without the capability", bare, "ask__sample", "does not support it", true},
		{"elicitation without the capability", bare, "ask__elicit", "does not support it", true},
		{"roots without the capability", bare, "ask__roots", "roots: ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.client.call(t, tt.tool)
			if got := testlib.ToolText(res); !strings.Contains(got, tt.want) || res.IsError != tt.isError {
				t.Errorf("%s: %q (isError %v), want %q (isError %v)", tt.tool, got, res.IsError, tt.want, tt.isError)
			}
		})
	}
	t.Run("roots outside a call", func(t *testing.T) {
		// The server asked at its start, before any client; the full client's roots
		// reach it through roots/list_changed. The bare client has none to share.
		waitFor(t, "the server's roots", func() bool { return slices.Equal(a.known(), []string{"file:///work/project"}) })
	})
	t.Run("two clients in flight", func(t *testing.T) {
		// While another session's call is in flight on the server, a request cannot be told
		// apart: refused, never sent to the wrong client.
		done := make(chan *mcp.CallToolResult, 1)
		go func() { done <- bare.call(t, "ask__wait") }()
		waitFor(t, "the waiting call", func() bool {
			d := g.byServer["ask"]
			d.pendMu.Lock()
			defer d.pendMu.Unlock()
			for p := range d.pend {
				if p.ended.IsZero() {
					return true
				}
			}
			return false
		})
		res := full.call(t, "ask__sample")
		close(a.gate)
		if !res.IsError || !strings.Contains(testlib.ToolText(res), "several clients") {
			t.Errorf("sampling with two sessions in flight: %q", testlib.ToolText(res))
		}
		if res := <-done; testlib.ToolText(res) != "waited" {
			t.Errorf("the waiting call: %q", testlib.ToolText(res))
		}
	})
}

// TestLoggingRelayed sets a client's logging level through the gateway and gets the server's
// messages at that level, named by their server.
func TestLoggingRelayed(t *testing.T) {
	a := &askServer{gate: make(chan struct{})}
	g := askGateway(t, a)
	c := connectAsk(t, g, false)
	quiet := connectAsk(t, g, false)
	ctx := testContext(t, 10*time.Second)
	if err := c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if res := c.call(t, "ask__log"); testlib.ToolText(res) != "logged" {
		t.Fatalf("ask__log: %q", testlib.ToolText(res))
	}
	select {
	case m := <-c.logs:
		if m.Level != "info" || m.Logger != "ask__disk" || m.Data != "wrote 3 files" {
			t.Errorf("log message: %+v", m)
		}
	case <-ctx.Done():
		t.Fatal("no log message reached the client")
	}
	quiet.call(t, "ask__log")
	time.Sleep(50 * time.Millisecond)
	for len(c.logs) > 0 || len(quiet.logs) > 0 {
		select {
		case m := <-c.logs:
			t.Errorf("a message under the client's level, or of another client's call: %+v", m)
		case m := <-quiet.logs:
			t.Errorf("the client that set no level got %+v", m)
		}
	}
}
