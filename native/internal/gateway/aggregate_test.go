package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsServer is an in-memory downstream with resources, a template, prompts, completions and
// subscriptions; its tools change a resource (touch) and its list (grow). subs counts its
// active subscriptions.
func docsServer(subs *atomic.Int32) func() *mcp.Server {
	return func() *mcp.Server {
		var srv *mcp.Server
		read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "text of " + req.Params.URI}}}, nil
		}
		srv = mcp.NewServer(&mcp.Implementation{Name: "docs"}, &mcp.ServerOptions{
			// resources/subscribe and unsubscribe are of the session-based protocol versions.
			SupportedProtocolVersions: frontVersions(),
			SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { subs.Add(1); return nil },
			UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { subs.Add(-1); return nil },
			CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				var vals []string
				for _, v := range []string{"Ada", "Alan", "Grace"} {
					if strings.HasPrefix(v, req.Params.Argument.Value) {
						vals = append(vals, req.Params.Ref.Type+":"+req.Params.Ref.Name+req.Params.Ref.URI+":"+v)
					}
				}
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
			},
		})
		srv.AddResource(&mcp.Resource{URI: "test://static/readme", Name: "readme", MIMEType: "text/plain"}, read)
		srv.AddResource(&mcp.Resource{URI: "file:///etc/secret.txt", Name: "secret"}, read)
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, read)
		srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
			})
		srv.AddPrompt(&mcp.Prompt{Name: "delete_all"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "delete everything"}}}}, nil
		})
		addTool(srv, "touch", "Change the readme.", func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
			srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://static/readme"})
			return text("touched"), nil
		})
		addTool(srv, "grow", "Add a resource and a prompt.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			srv.AddResource(&mcp.Resource{URI: "test://static/new", Name: "new"}, read)
			srv.AddPrompt(&mcp.Prompt{Name: "new"}, nil)
			return text("grown"), nil
		})
		return srv
	}
}

// docsConfig serves docsServer as "docs" and the tool-only alpha, hiding the secret and the
// prompt delete_all (one by the server's own deny, one by the top level's).
func docsConfig() *Config {
	return &Config{Servers: []ServerConfig{
		{Name: "docs", Command: "unused", Timeout: 5 * time.Second, Deny: []string{"*SECRET*"}},
		{Name: "alpha", Command: "unused", Timeout: 5 * time.Second},
	}, Deny: []string{"docs__delete*"}}
}

type listener struct {
	resources, prompts chan struct{}
	updated            chan string
}

func connectListener(t *testing.T, g *Gateway) (*mcp.ClientSession, *listener) {
	t.Helper()
	l := &listener{resources: make(chan struct{}, 100), prompts: make(chan struct{}, 100), updated: make(chan string, 100)}
	client := mcp.NewClient(&mcp.Implementation{Name: "reader"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { l.resources <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { l.prompts <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			l.updated <- r.Params.URI
		},
	})
	return connectClient(t, g, client), l
}

// TestResourcesAndPromptsAggregated lists, reads and completes the servers' resources,
// templates and prompts through the gateway, under SERVER__ names and the filters.
func TestResourcesAndPromptsAggregated(t *testing.T) {
	var subs atomic.Int32
	g := startGateway(t, docsConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"docs": docsServer(&subs), "alpha": alphaServer})})
	cs, _ := connectListener(t, g)
	ctx := testContext(t, 20*time.Second)

	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil || caps.Logging == nil {
		t.Errorf("the front's capabilities: %+v", caps)
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	if diff := cmp.Diff([]string{"docs__test://static/readme"}, uris); diff != "" {
		t.Errorf("resources/list (-want +got):\n%s", diff)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "docs__test://items/{id}" {
		t.Errorf("resources/templates/list: %+v (%v)", lt, err)
	}
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "docs__greet" || len(lp.Prompts[0].Arguments) != 1 {
		t.Errorf("prompts/list: %+v (%v)", lp, err)
	}

	reads := []struct {
		name, uri string
		want      string // the text read, "" for an error
	}{
		{"listed", "docs__test://static/readme", "text of test://static/readme"},
		{"from a template", "docs__test://items/42", "text of test://items/42"},
		{"denied by the server's deny", "docs__file:///etc/secret.txt", ""},
		{"denied, other case", "docs__FILE:///ETC/SECRET.TXT", ""},
		{"no such server", "nope__test://static/readme", ""},
		{"not namespaced, one server has resources", "test://static/readme", "text of test://static/readme"},
		{"a server without resources", "alpha__test://static/readme", ""},
	}
	for _, tt := range reads {
		t.Run("read "+tt.name, func(t *testing.T) {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
			if tt.want == "" {
				var we *jsonrpc.Error
				if err == nil || !errors.As(err, &we) || we.Code != mcp.CodeResourceNotFound && !strings.Contains(we.Message, "no resource") {
					t.Errorf("read %s: %+v, %v; want no resource", tt.uri, res, err)
				}
				return
			}
			// The contents are named as the client named the resource.
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != tt.want || res.Contents[0].URI != tt.uri {
				t.Errorf("read %s: %+v (%v)", tt.uri, res, err)
			}
		})
	}

	prompts := []struct {
		name, prompt string
		want         string // "" for an error
	}{
		{"listed", "docs__greet", "Hello, Ada"},
		{"denied at the top level", "docs__delete_all", ""},
		{"denied, other case", "DOCS__Delete_All", ""},
		{"unknown", "docs__nope", ""},
	}
	for _, tt := range prompts {
		t.Run("get "+tt.name, func(t *testing.T) {
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tt.prompt, Arguments: map[string]string{"name": "Ada"}})
			if tt.want == "" {
				if err == nil {
					t.Errorf("prompts/get %s: %+v, want an error", tt.prompt, res)
				}
				return
			}
			if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != tt.want {
				t.Errorf("prompts/get %s: %+v (%v)", tt.prompt, res, err)
			}
		})
	}

	completions := []struct {
		name string
		ref  *mcp.CompleteReference
		want []string // nil for an error
	}{
		{"prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: "docs__greet"}, []string{"ref/prompt:greet:Ada", "ref/prompt:greet:Alan"}},
		{"template", &mcp.CompleteReference{Type: "ref/resource", URI: "docs__test://items/{id}"}, []string{"ref/resource:test://items/{id}:Ada", "ref/resource:test://items/{id}:Alan"}},
		{"denied prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: "docs__delete_all"}, nil},
	}
	for _, tt := range completions {
		t.Run("complete "+tt.name, func(t *testing.T) {
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
			if tt.want == nil {
				if err == nil {
					t.Errorf("complete %+v: %+v, want an error", tt.ref, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Completion.Values); diff != "" {
				t.Errorf("complete %+v (-want +got):\n%s", tt.ref, diff)
			}
		})
	}
}

// TestResourceSubscriptionsAndListChanged subscribes two sessions to a resource through the
// gateway: the server gets one subscription, each session the update under its SERVER__ URI,
// and the server's subscription ends with the last session's; a server's new resources and
// prompts reach every session as list_changed.
func TestResourceSubscriptionsAndListChanged(t *testing.T) {
	var subs atomic.Int32
	g := startGateway(t, docsConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"docs": docsServer(&subs), "alpha": alphaServer})})
	a, la := connectListener(t, g)
	b, lb := connectListener(t, g)
	ctx := testContext(t, 20*time.Second)
	const uri = "docs__test://static/readme"
	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs__file:///etc/secret.txt"}); err == nil {
		t.Error("subscribed to a denied resource")
	}
	if n := subs.Load(); n != 1 {
		t.Errorf("the server has %d subscriptions, want 1 for two sessions", n)
	}
	if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "docs__touch"}}); err != nil {
		t.Fatal(err)
	}
	for i, l := range []*listener{la, lb} {
		select {
		case got := <-l.updated:
			if got != uri {
				t.Errorf("session %d: updated %q, want %q", i, got, uri)
			}
		case <-ctx.Done():
			t.Fatalf("session %d: no notifications/resources/updated", i)
		}
	}
	if err := a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n := subs.Load(); n != 1 {
		t.Errorf("after one of two unsubscribed, the server has %d subscriptions, want 1", n)
	}
	b.Close()
	waitFor(t, "the server's subscription to end with the last session", func() bool { return subs.Load() == 0 })

	// list_changed: the sessions may have had some at the servers' start; only the ones after
	// grow count.
	drain(la.resources)
	drain(la.prompts)
	if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "docs__grow"}}); err != nil {
		t.Fatal(err)
	}
	for what, ch := range map[string]chan struct{}{"resources": la.resources, "prompts": la.prompts} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %s list_changed", what)
		}
	}
	lr, err := a.ListResources(ctx, nil)
	if err != nil || !slices.ContainsFunc(lr.Resources, func(r *mcp.Resource) bool { return r.URI == "docs__test://static/new" }) {
		t.Errorf("resources/list after grow: %+v (%v)", lr, err)
	}
}

// TestClientFilterHidesResourcesAndPrompts gives a client's filter the same hold on resources
// and prompts as on tools.
func TestClientFilterHidesResourcesAndPrompts(t *testing.T) {
	var subs atomic.Int32
	cfg := docsConfig()
	cfg.Clients = map[string]ClientConfig{"bob": {Deny: []string{"*README*", "*greet"}}}
	g := startGateway(t, cfg, Options{Tokens: testTokens(t),
		dial: inMemory(t, map[string]func() *mcp.Server{"docs": docsServer(&subs), "alpha": alphaServer})})
	front := serveFront(t, g)
	ctx := testContext(t, 20*time.Second)
	tests := []struct {
		client, token string
		sees          bool
	}{
		{"bob", bobToken, false},
		{"alice", aliceToken, true},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			cs, err := httpSession(ctx, front.URL, tt.token)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			lr, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			lp, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, readErr := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs__test://static/readme"})
			_, getErr := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs__greet", Arguments: map[string]string{"name": "x"}})
			subErr := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs__test://static/readme"})
			got := []bool{len(lr.Resources) == 1, len(lp.Prompts) == 1, readErr == nil, getErr == nil, subErr == nil}
			for i, what := range []string{"listed resource", "listed prompt", "read", "get", "subscribe"} {
				if got[i] != tt.sees {
					t.Errorf("%s: %s: %v, want %v (%v %v %v)", tt.client, what, got[i], tt.sees, readErr, getErr, subErr)
				}
			}
		})
	}
}

// TestUnprefixedNamesNeedOneServer reads a resource by its server's own URI only while one
// server offers resources: with two, the name must say whose.
func TestUnprefixedNamesNeedOneServer(t *testing.T) {
	var subs atomic.Int32
	cfg := &Config{Servers: []ServerConfig{
		{Name: "docs", Command: "unused", Timeout: 5 * time.Second},
		{Name: "wiki", Command: "unused", Timeout: 5 * time.Second},
	}}
	g := startGateway(t, cfg, Options{dial: inMemory(t, map[string]func() *mcp.Server{"docs": docsServer(&subs), "wiki": docsServer(&subs)})})
	cs, _ := connectListener(t, g)
	ctx := testContext(t, 20*time.Second)
	tests := []struct {
		uri string
		ok  bool
	}{
		{"test://static/readme", false},
		{"docs__test://static/readme", true},
		{"wiki__test://static/readme", true},
	}
	for _, tt := range tests {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
		if (err == nil) != tt.ok {
			t.Errorf("read %s: %+v, %v; want ok %v", tt.uri, res, err, tt.ok)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x"}}); err == nil {
		t.Error("prompts/get greet with two servers offering prompts: no error")
	}
}
