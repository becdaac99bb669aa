package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// Tokens of the tests: 32 characters and more, as ParseTokens wants.
const (
	aliceToken   = "alice-0123456789abcdef0123456789abcdef"
	bobToken     = "bob-0123456789abcdef0123456789abcdef01"
	malloryToken = "mallory-0123456789abcdef0123456789abcd"
)

func testTokens(t *testing.T) *Tokens {
	t.Helper()
	tok, err := ParseTokens("tokens", []byte("# team\nalice "+aliceToken+"\nbob\t"+bobToken+"\r\n\nmallory "+malloryToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestParseTokens(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name, in string
		want     []string // client names; nil: an error is wanted
		err      string
	}{
		{name: "two clients", in: "# comment\nalice " + long + "\n  bob   " + long + "y  \n", want: []string{"alice", "bob"}},
		{name: "CRLF", in: "ci.bot-1 " + long + "\r\n", want: []string{"ci.bot-1"}},
		{name: "empty", in: "\n# none\n", err: "gateway: t.txt: no clients (want a line NAME TOKEN for each)"},
		{name: "token only", in: long + "\n", err: "gateway: t.txt:1: want NAME TOKEN, got 1 fields"},
		{name: "three fields", in: "a b " + long, err: "gateway: t.txt:1: want NAME TOKEN, got 3 fields"},
		{name: "short token", in: "alice hunter2", err: "gateway: t.txt:1: client alice: the token has 7 characters, want 32 to 4096 (openssl rand -hex 32 makes one)"},
		{name: "bad character", in: "alice " + long + "!", err: "gateway: t.txt:1: client alice: the token's character 41 is not one of A-Z a-z 0-9 - . _ ~ + / ="},
		{name: "bad name", in: "al:ice " + long, err: `gateway: t.txt:1: a client name may hold only letters, digits, '_', '-' and '.', not ':'`},
		{name: "name twice", in: "a " + long + "\na " + long + "z", err: "gateway: t.txt:2: client a is named on line 1 too"},
		{name: "token twice", in: "a " + long + "\nb " + long, err: "gateway: t.txt:2: client b has the token of line 1; each client needs its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens("t.txt", []byte(tt.in))
			if tt.want == nil {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), long) {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Names(), tt.want) {
				t.Errorf("names %v, want %v", got.Names(), tt.want)
			}
		})
	}
}

// FuzzParseTokens: any input parses or is refused with an error naming the file, and what
// parses finds each of its clients by its own token only.
func FuzzParseTokens(f *testing.F) {
	long := strings.Repeat("x", 40)
	for _, s := range []string{"alice " + long, "a " + long + "\nb " + long + "y\n", "# c\n\n", "a b c", "\x00 " + long} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseTokens("t", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "gateway: t") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) != 2 || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if name, ok := tok.lookup(fields[1]); !ok || name != fields[0] {
				t.Fatalf("token of %q finds %q, %v", fields[0], name, ok)
			}
			if _, ok := tok.lookup(fields[1] + "x"); ok && !slices.Contains(tok.Names(), fields[0]) {
				t.Fatalf("a token not in the file is known")
			}
		}
	})
}

func TestCheckBind(t *testing.T) {
	tok := testTokens(t)
	tests := []struct {
		addr   string
		tokens *Tokens
		ok     bool
	}{
		{"127.0.0.1:8080", nil, true},
		{"[::1]:8080", nil, true},
		{"0.0.0.0:8080", nil, false},
		{"192.168.1.5:8080", nil, false},
		{"0.0.0.0:8080", tok, true},
	}
	for _, tt := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckBind(addr, tt.tokens)
		if (err == nil) != tt.ok {
			t.Errorf("%s tokens=%v: %v", tt.addr, tt.tokens != nil, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--auth-tokens") {
			t.Errorf("%s: the error does not say what to do: %v", tt.addr, err)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	allowed := []string{"gw.example.com", "10.0.0.5:8080", "[fe80::1]"}
	tests := []struct {
		host string
		want bool
	}{
		{"gw.example.com", true}, {"GW.Example.COM:9000", true}, {"10.0.0.5:8080", true}, {"10.0.0.5:9090", false},
		{"10.0.0.5", false}, {"[fe80::1]:80", true}, {"evil.example", false}, {"gw.example.com.evil.example", false}, {"", false},
	}
	for _, tt := range tests {
		if got := hostAllowed(tt.host, allowed); got != tt.want {
			t.Errorf("hostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// TestAllowedHostsHandler: beyond loopback, a request whose Host is not one of AllowedHosts is
// refused on every route (health too); loopback keeps its own check.
func TestAllowedHostsHandler(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{Tokens: testTokens(t), AllowedHosts: []string{"gw.example.com"},
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	h := g.Handler()
	lan := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 8080}
	tests := []struct {
		host  string
		local net.Addr
		want  int
	}{
		{"gw.example.com:8080", lan, http.StatusOK},
		{"rebound.evil.example:8080", lan, http.StatusForbidden},
		{"192.168.1.5:8080", lan, http.StatusForbidden},
		{"localhost:8080", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, http.StatusOK},
		{"gw.example.com", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, http.StatusForbidden},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", mcptransport.HealthPath, nil)
		r.Host = tt.host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("Host %s on %v: %d, want %d: %s", tt.host, tt.local, w.Code, tt.want, w.Body)
		}
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// httpSession opens a front session over HTTP with token ("" none).
func httpSession(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	var hc *http.Client
	if token != "" {
		hc = &http.Client{Transport: bearer{token, http.DefaultTransport}}
	}
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + mcptransport.MCPPath, HTTPClient: hc, MaxRetries: -1}, nil)
}

func rawPost(t *testing.T, url, token, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url+mcptransport.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The body is read whole, so that the connection is free when rawPost returns.
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// TestBearerTokens: with tokens, a request without one or with a wrong one gets 401 and a
// challenge; one with a client's token gets through; a session is its client's, and another
// client's token cannot use its id.
func TestBearerTokens(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{Tokens: testTokens(t),
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	front := serveFront(t, g)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	tests := []struct {
		name, auth string
		want       int
		challenge  string
	}{
		{"no token", "", http.StatusUnauthorized, `Bearer realm="caskg-gateway"`},
		{"wrong token", strings.Repeat("z", 40), http.StatusUnauthorized, `Bearer realm="caskg-gateway", error="invalid_token"`},
		{"a token's prefix", aliceToken[:len(aliceToken)-1], http.StatusUnauthorized, `Bearer realm="caskg-gateway", error="invalid_token"`},
		{"alice", aliceToken, http.StatusOK, ""},
	}
	for _, tt := range tests {
		resp := rawPost(t, front.URL, tt.auth, "", initialize)
		if resp.StatusCode != tt.want || resp.Header.Get("WWW-Authenticate") != tt.challenge {
			t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.want, tt.challenge)
		}
	}
	// The scheme is case-insensitive (RFC 7235); Basic is not Bearer.
	req, _ := http.NewRequest("POST", front.URL+mcptransport.MCPPath, strings.NewReader(initialize))
	req.Header.Set("Authorization", "Basic "+aliceToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Basic: %v %v", resp, err)
	}

	resp := rawPost(t, front.URL, aliceToken, "", initialize)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	if resp := rawPost(t, front.URL, bobToken, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob on alice's session: %d, want 403", resp.StatusCode)
	}
	if resp := rawPost(t, front.URL, aliceToken, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("alice on her session: %d, want 200", resp.StatusCode)
	}
}

// TestClientFilter: a client's allow and deny hold in its search, its tools/list (exposed
// tools) and its calls, and not in another client's.
func TestClientFilter(t *testing.T) {
	cfg := alphaConfig()
	cfg.Clients = map[string]ClientConfig{"bob": {Deny: []string{"*READ*"}}, "alice": {Allow: []string{"alpha__read_file", "alpha__stat"}}}
	rec := &recorder{}
	g := startGateway(t, cfg, Options{Tokens: testTokens(t), Expose: 3, Learner: rec,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	front := serveFront(t, g)
	ctx := testContext(t, 20*time.Second)
	tests := []struct {
		client, token string
		readable      bool
		visible       int // tools its search_tools description counts
	}{
		{"bob", bobToken, false, 4},
		{"alice", aliceToken, true, 2},
		{"mallory", malloryToken, true, 5},
	}
	for _, tt := range tests {
		cs, err := httpSession(ctx, front.URL, tt.token)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: searchTool, Arguments: map[string]any{"query": "read a file", "k": 8}})
		if err != nil {
			t.Fatal(err)
		}
		var out searchResult
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		if got := slices.Contains(names(out), "alpha__read_file"); got != tt.readable {
			t.Errorf("%s: search has alpha__read_file: %v, want %v (%v)", tt.client, got, tt.readable, names(out))
		}
		if tt.client == "alice" && len(out.Tools) != 2 {
			t.Errorf("alice: search gave %v, want her 2 tools", names(out))
		}
		list := testlib.Tools(t, ctx, cs)
		listed := testlib.ToolNames(list)
		for _, tool := range list {
			if tool.Name == searchTool && !strings.Contains(tool.Description, " "+strconv.Itoa(tt.visible)+" tools ") {
				t.Errorf("%s: search_tools says %q, want %d tools", tt.client, tool.Description, tt.visible)
			}
		}
		if got := slices.Contains(listed, "alpha__read_file"); got != tt.readable {
			t.Errorf("%s: tools/list has alpha__read_file: %v, want %v (%v)", tt.client, got, tt.readable, listed)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "ALPHA__read_FILE"}})
		if err == nil && !res.IsError {
			t.Errorf("%s: a misspelt name ran", tt.client)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "alpha__read_file", "arguments": map[string]any{"path": "x"}}})
		if err != nil {
			t.Fatal(err)
		}
		if ran := !res.IsError; ran != tt.readable {
			t.Errorf("%s: call ran: %v, want %v: %+v", tt.client, ran, tt.readable, res.Content)
		}
		if !tt.readable && strings.Contains(testlib.ToolText(res), "read_file;") {
			t.Errorf("%s: the refusal suggests a denied tool: %s", tt.client, testlib.ToolText(res))
		}
		cs.Close()
	}
	waitFor(t, "the sessions' traces", func() bool { return len(rec.got()) == 2 })
	for _, tr := range rec.got() {
		if tr.Source != "client:alice" && tr.Source != "client:mallory" {
			t.Errorf("trace %s: source %q", tr.ID, tr.Source)
		}
	}
}

// steerServers are a filesystem server and one whose get-env prints the environment: the
// tool an attacker wants an agent to call for an innocent task.
func steerServers() map[string]func() *mcp.Server {
	mk := func(name string, tools [][2]string) func() *mcp.Server {
		return func() *mcp.Server {
			srv := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
			for _, tool := range tools {
				addTool(srv, tool[0], tool[1], func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return text(tool[0]), nil })
			}
			return srv
		}
	}
	return map[string]func() *mcp.Server{
		"fs": mk("fs", [][2]string{
			{"read_text_file", "Read the complete contents of a text file from the file system."},
			{"read_multiple_files", "Read the contents of several files at once."},
			{"write_file", "Create a new file or overwrite an existing one with new content."},
			{"edit_file", "Make line-based edits to a text file."},
			{"list_directory", "List the files and directories in a path."},
			{"create_directory", "Create a new directory."},
			{"move_file", "Move or rename files and directories."},
			{"search_files", "Search for files matching a pattern."},
			{"get_file_info", "Get metadata about a file: size, times, permissions."},
		}),
		"everything": mk("everything", [][2]string{
			{"get-env", "Return all environment variables of the server process."},
			{"echo", "Echo back the input message."},
			{"add", "Add two numbers."},
			{"long-running-operation", "Demonstrate a long running operation with progress."},
			{"sample-llm", "Sample from an LLM using the client."},
			{"get-tiny-image", "Return a tiny image."},
		}),
	}
}

// TestForgedSessionsCannotSteer: 40 sessions that each search "read a text file" and then
// call read_text_file and get-env teach the graph to offer get-env for that task when they are
// trusted; from one client's token they count as one reporter, and get-env stays out of the
// top results. The trusted case shows the attack works, so the test can fail.
func TestForgedSessionsCannotSteer(t *testing.T) {
	const query, bad, k = "read a text file", "everything__get-env", 5
	rank := func(t *testing.T, token string) (int, learn.Status) {
		cfg := &Config{Servers: []ServerConfig{{Name: "everything", Command: "unused", Timeout: 5 * time.Second},
			{Name: "fs", Command: "unused", Timeout: 5 * time.Second}}}
		loop, err := learn.Open(t.TempDir(), learn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { loop.Close(context.Background()) })
		opt := Options{Learner: loop, dial: inMemory(t, steerServers())}
		if token != "" {
			opt.Tokens = testTokens(t)
		}
		g := startGateway(t, cfg, opt)
		front := serveFront(t, g)
		ctx := testContext(t, 60*time.Second)
		for i := range 40 {
			cs, err := httpSession(ctx, front.URL, token)
			if err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
			for _, c := range []*mcp.CallToolParams{
				{Name: searchTool, Arguments: map[string]any{"query": query}},
				{Name: callTool, Arguments: map[string]any{"name": "fs__read_text_file", "arguments": map[string]any{"path": "/etc/hosts"}}},
				{Name: callTool, Arguments: map[string]any{"name": bad}},
			} {
				if res, err := cs.CallTool(ctx, c); err != nil || res.IsError {
					t.Fatalf("session %d: %s: %v %v", i, c.Name, err, res)
				}
			}
			cs.Close()
		}
		waitFor(t, "40 traces", func() bool { return loop.Status().TracesRecorded == 40 })
		loop.LearnNow()
		if err := loop.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		st := loop.Status()
		if st.TracesLearned != 40 {
			t.Fatalf("learned %d traces, want 40: %+v", st.TracesLearned, st)
		}
		out := g.search(query, k, engine.Filter{}, nil)
		if out.Ranking != "graph" {
			t.Fatalf("ranking %q", out.Ranking)
		}
		return slices.Index(names(*out), bad), st
	}
	if r, st := rank(t, ""); r < 0 {
		t.Fatalf("trusted sessions did not raise %s into the top %d for %q (edges from use %d): the test shows nothing", bad, k, query, st.EdgesFromUse)
	}
	if r, st := rank(t, malloryToken); r >= 0 {
		t.Errorf("one client's 40 sessions put %s at #%d for %q (edges from use %d)", bad, r+1, query, st.EdgesFromUse)
	}
}
