package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
)

func TestReportSkillUse(t *testing.T) {
	g := sample(t)
	store := &service.MemoryFeedback{}
	cs := connect(t, g, mcpserver.Options{Feedback: store})
	res := call(t, cs, "report_skill_use", map[string]any{"query": "heat some egg",
		"used": []string{"pick-up-object", "heat-object-in-microwave"}, "outcome": "success"})
	var out mcpcore.FeedbackOutput
	structured(t, res, &out)
	if out != (mcpcore.FeedbackOutput{Recorded: 2, Outcome: "success"}) {
		t.Errorf("result %+v, want 2 recorded, success", out)
	}
	if got := text(t, res); got != "Recorded: 2 skills used, success.\n" {
		t.Errorf("text %q", got)
	}
	want := []service.Feedback{{Query: "heat some egg", Used: []string{"pick-up-object", "heat-object-in-microwave"}, Outcome: "success", Source: mcpserver.StdioSource}}
	if !cmp.Equal(store.Reports(), want) {
		t.Errorf("stored %+v, want %+v", store.Reports(), want)
	}

	// Refused reports reach nothing.
	long := strings.Repeat("x", 100)
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown skill", map[string]any{"query": "egg", "used": []string{"pick-up-object", long}},
			`field "used": not skills of this artifact: "` + strings.Repeat("x", 40) + `…"`},
		{"bad outcome", map[string]any{"query": "egg", "used": []string{"pick-up-object"}, "outcome": "meh"},
			`field "outcome": "meh" is not "success" or "failure"`},
		{"blank query", map[string]any{"query": "  ", "used": []string{"pick-up-object"}}, `field "query": empty`},
		{"no query", map[string]any{"used": []string{"pick-up-object"}}, `field "query": required`},
		{"empty used", map[string]any{"query": "egg", "used": []string{}}, `field "used": empty`},
		{"used not an array", map[string]any{"query": "egg", "used": "pick-up-object"}, `field "used": must be an array of strings, not a string`},
		{"used a number", map[string]any{"query": "egg", "used": []any{"pick-up-object", 3}}, `field "used": element 1: must be a string, not a number`},
		{"too many", map[string]any{"query": "egg", "used": make([]string, service.MaxUsed+1)}, `field "used": 101 elements, at most 100`},
		{"unknown argument", map[string]any{"query": "egg", "used": []string{"pick-up-object"}, "task": "x"}, `unknown argument "task"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, call(t, cs, "report_skill_use", tt.args), tt.want)
		})
	}
	if len(store.Reports()) != 1 {
		t.Errorf("%d reports stored, want 1: a refused report must not be stored", len(store.Reports()))
	}
}

func TestReportSkillUseOff(t *testing.T) {
	cs := connect(t, sample(t), mcpserver.Options{})
	wantError(t, call(t, cs, "report_skill_use", map[string]any{"query": "egg", "used": []string{"pick-up-object"}}),
		"feedback is off on this server", "--feedback FILE")
}

func TestReportSkillUseStoreErrors(t *testing.T) {
	args := map[string]any{"query": "egg", "used": []string{"pick-up-object"}}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&service.RateLimitError{RetryAfter: 300 * time.Millisecond}, "too many feedback reports; retry in 1s"},
		{errors.New("disk full"), "feedback not recorded: disk full"},
	} {
		cs := connect(t, sample(t), mcpserver.Options{Feedback: &service.MemoryFeedback{Err: tt.err}})
		wantError(t, call(t, cs, "report_skill_use", args), tt.want)
	}
}

// TestReportSkillUseHTTP calls report_skill_use over streamable HTTP on 127.0.0.1, where the
// call's Authorization header decides (Options.Reporters): a reporter's token is recorded as
// from token:NAME; a missing or wrong one is a tool error that records nothing; without tokens,
// a server beyond loopback takes nothing and one on loopback takes all as one reporter.
func TestReportSkillUseHTTP(t *testing.T) {
	tokens, err := service.ParseTokens("t", "alice alice-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"query": "egg", "used": []string{"pick-up-object"}}
	for _, tt := range []struct {
		name   string
		auth   service.FeedbackAuth
		header string
		source string // "": refused
		err    string
	}{
		{"right token", service.FeedbackAuth{Tokens: tokens}, "Bearer alice-0123456789abcdef", "token:alice", ""},
		{"missing token", service.FeedbackAuth{Tokens: tokens}, "", "", "feedback needs a bearer token"},
		{"wrong token", service.FeedbackAuth{Tokens: tokens}, "Bearer alice-0123456789abcdeF", "", "not one of this server's feedback tokens"},
		{"beyond loopback, no tokens", service.FeedbackAuth{}, "Bearer alice-0123456789abcdef", "", "only with a bearer token"},
		{"loopback, no tokens", service.FeedbackAuth{Local: service.LoopbackSource}, "", "loopback", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := &service.MemoryFeedback{}
			srv, err := mcpserver.New(sample(t), mcpserver.Options{Feedback: store, Reporters: tt.auth})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() }, nil))
			defer hs.Close()
			hc := &http.Client{Timeout: 20 * time.Second, Transport: withHeader{"Authorization", tt.header}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res := call(t, cs, "report_skill_use", args)
			got := store.Reports()
			if tt.source == "" {
				wantError(t, res, "nothing was recorded", tt.err)
				if len(got) != 0 {
					t.Errorf("stored %+v, want nothing", got)
				}
				return
			}
			if res.IsError || len(got) != 1 || got[0].Source != tt.source {
				t.Errorf("error %v, stored %+v; want one report from %s", res.IsError, got, tt.source)
			}
		})
	}
}

// withHeader is an http.RoundTripper that adds a header to every request (none when empty).
type withHeader struct{ name, value string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.value != "" {
		r = r.Clone(r.Context())
		r.Header.Set(h.name, h.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}
