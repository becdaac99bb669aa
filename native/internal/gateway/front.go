package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
)

// Front tool names (mcpcore's).
const (
	searchTool = mcpcore.SearchTools
	callTool   = mcpcore.CallTool
)

// frontVersions are the protocol versions the front speaks: the session-based ones (see the
// package comment).
func frontVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

// frontSession is one client session of the front: its own MCP server (its tools/list differs
// from others' under Expose), its trace in flight and its exposed tools. It gets what it uses
// of the gateway's options when it is made; the gateway keeps the table of sessions (join,
// leave) and the state they share.
type frontSession struct {
	g          *Gateway
	srv        *mcp.Server
	clock      clock
	maxExposed int // Options.Expose
	metrics    *metrics
	subs       *subscriptions

	// client is the tokens file's name of the session's client, "" for a trusted session;
	// filter is its entry of the config's "clients", nil for none. Both are set at creation.
	client string
	filter *ClientConfig

	// Under g.mu, from registration: the SDK session (nil for ServeStdio's until its first
	// request), the time of the latest request, the requests in flight and the order of
	// registration, by which MaxSessions picks the session to end.
	ss       *mcp.ServerSession
	last     time.Time
	inflight int
	seqNo    int
	refused  error // set when MaxSessions refused the session

	registerOnce sync.Once
	id           string // set at registration
	httpID       string // the Mcp-Session-Id of an HTTP session, set at registration; under g.mu

	trace *tracker

	logLevel mcp.LoggingLevel // what logging/setLevel asked for, "" before; under g.mu

	exposeMu sync.Mutex
	exposed  []string // SERVER__TOOL names registered as direct tools, best first
}

// newFrontSession makes a session's server for client ("" trusted); it joins the gateway's
// sessions at its first request, initialize (register).
func (g *Gateway) newFrontSession(client string) *frontSession {
	s := &frontSession{g: g, clock: g.clock, maxExposed: g.opt.Expose, metrics: g.metrics, subs: &g.subs, client: client}
	if cc, ok := g.cfg.Clients[client]; ok && client != "" {
		s.filter = &cc
	}
	s.trace = newTracker(g.clock, g.opt.TraceGap, s.source(), func(tr learn.Trace) { g.record(client, tr) })
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "caskg-gateway", Title: "caskg gateway", Version: g.opt.Version},
		&mcp.ServerOptions{
			Instructions:              mcpcore.GatewayInstructions,
			SupportedProtocolVersions: frontVersions(),
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
				Logging:   &mcp.LoggingCapabilities{},
				Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
				Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			},
			InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
				s.fetchRoots(ctx, req.Session)
			},
			RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
				s.fetchRoots(ctx, req.Session)
			},
			CompletionHandler:  s.complete,
			SubscribeHandler:   s.subscribe,
			UnsubscribeHandler: s.unsubscribe,
		})
	// Every request registers the session and marks it busy while it runs: a session counts
	// against MaxSessions from its initialize, not from the notification after it, which a
	// client may never send.
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if err := s.register(ss); err != nil {
				return nil, err
			}
			g.busy(s, 1)
			defer g.busy(s, -1)
			if h := s.aggregated(method); h != nil {
				return h(ctx, req)
			}
			res, err := next(ctx, method, req)
			if method == "logging/setLevel" && err == nil {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
					s.setLogLevel(p.Level)
				}
			}
			return res, err
		}
	})
	s.srv.AddReceivingMiddleware(recovering(g.logf))
	c := g.current()
	s.srv.AddTool(searchToolDef(c, s.keeps), s.searchHandler)
	s.srv.AddTool(callToolDef(), s.callHandler)
	return s
}

// recovering is the front's outermost middleware: a panic in any handler of a request or
// notification (a bug in caskg, or a downstream answer no test foresaw) becomes an error for
// that request and a log line, and the gateway and its other sessions go on. The SDK itself
// does not recover, so without it one panic ends every session.
func recovering(logf func(string, ...any)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if r := recover(); r != nil {
					logf("gateway: %s panicked (a bug in caskg; the gateway goes on): %v", method, r)
					res, err = nil, fmt.Errorf("gateway: internal error in %s (a bug in caskg); the gateway goes on", method)
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// keeps reports whether the session's client may see and call a catalog tool.
func (s *frontSession) keeps(name string) bool { return s.filter == nil || s.filter.keeps(name) }

// source is what the session's traces give as their source: "client:NAME", or "" (trusted).
func (s *frontSession) source() string {
	if s.client == "" {
		return ""
	}
	return "client:" + s.client
}

// busy notes a request of s beginning (+1) or ending (-1).
func (g *Gateway) busy(s *frontSession, delta int) {
	g.mu.Lock()
	s.inflight += delta
	s.last = g.clock.now()
	g.mu.Unlock()
}

// register adds the session to the gateway's sessions, once (join), and arranges its end when
// the client goes away. With MaxSessions sessions open it ends the one idle longest, or refuses
// this one when all are busy (the error, for every request of the session).
func (s *frontSession) register(ss *mcp.ServerSession) error {
	s.registerOnce.Do(func() { s.g.join(s, ss) })
	return s.refused
}

// join is register's work, done once per session.
func (g *Gateway) join(s *frontSession, ss *mcp.ServerSession) {
	g.mu.Lock()
	g.seq++
	s.seqNo = g.seq
	s.id = g.runID + "." + strconv.Itoa(g.seq)
	s.ss, s.last = ss, g.clock.now()
	closed := g.closed
	var victim *frontSession
	if !closed {
		victim, s.refused = g.admitLocked(s)
		if s.refused == nil {
			g.sessions[s] = true
		}
	}
	g.mu.Unlock()
	s.trace.begin(s.id)
	if victim != nil {
		g.evict(victim)
	}
	if s.refused != nil {
		g.logf("%v", s.refused)
		if ss != nil {
			go ss.Close()
		}
		return
	}
	if closed {
		return
	}
	if ss != nil && ss.ID() != "" {
		g.mu.Lock()
		s.httpID = ss.ID()
		g.byID[s.httpID] = s
		g.mu.Unlock()
	}
	// The catalog may have changed since the server was made.
	s.catalogChanged(g.current())
	if ss != nil {
		go func() {
			ss.Wait()
			s.end()
		}()
	}
}

// end records the trace in flight and forgets the session.
func (s *frontSession) end() {
	// A session that never registered had no request and has no trace; this also keeps it
	// from registering later.
	s.registerOnce.Do(func() {})
	if s.id == "" {
		return
	}
	s.trace.finish()
	s.g.leave(s)
}

// leave forgets a session that ended: its roots, its subscriptions, its place in the table.
func (g *Gateway) leave(s *frontSession) {
	g.setRoots(s, nil, false)
	g.subs.release(s)
	g.mu.Lock()
	delete(g.sessions, s)
	if s.httpID != "" && g.byID[s.httpID] == s {
		delete(g.byID, s.httpID)
	}
	g.mu.Unlock()
}

// searchToolDef is search_tools as the front lists it (mcpcore.SearchToolsDef); its description
// names the servers and the number of tools behind it that keep (the client's filter) passes.
func searchToolDef(c *catalog, keep func(string) bool) *mcp.Tool {
	n, visible := c.visible(keep)
	t := mcpcore.SearchToolsDef(n, visible)
	return &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema),
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
}

// callToolDef is call_tool as the front lists it (mcpcore.CallToolDef): it runs other servers'
// tools, so it is open-world.
func callToolDef() *mcp.Tool {
	t := mcpcore.CallToolDef
	return &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema),
		Annotations: &mcp.ToolAnnotations{Title: t.Title, OpenWorldHint: new(true)},
	}
}

// catalogChanged updates the session's tools after the catalog changed: search_tools' description
// and the exposed tools (dropped when gone, their definitions renewed).
func (s *frontSession) catalogChanged(c *catalog) {
	s.srv.AddTool(searchToolDef(c, s.keeps), s.searchHandler)
	s.exposeMu.Lock()
	defer s.exposeMu.Unlock()
	var keep []string
	for _, name := range s.exposed {
		if e := c.byName[name]; e != nil && s.keeps(name) && s.addDirect(e) {
			keep = append(keep, name)
		} else {
			s.srv.RemoveTools(name)
		}
	}
	s.exposed = keep
}

// expose makes names (best first, at most Options.Expose) the session's direct tools.
func (s *frontSession) expose(names []string) {
	if s.maxExposed <= 0 {
		return
	}
	if len(names) > s.maxExposed {
		names = names[:s.maxExposed]
	}
	c := s.g.current()
	s.exposeMu.Lock()
	defer s.exposeMu.Unlock()
	var gone []string
	for _, old := range s.exposed {
		if !slices.Contains(names, old) {
			gone = append(gone, old)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	var now []string
	for _, name := range names {
		if slices.Contains(s.exposed, name) {
			now = append(now, name)
			continue
		}
		if e := c.byName[name]; e != nil && s.keeps(name) && s.addDirect(e) {
			now = append(now, name)
		}
	}
	s.exposed = now
}

// addDirect registers a catalog tool as one of the session's own tools. A tool whose input
// schema the SDK refuses (not an object schema) stays reachable through call_tool only.
func (s *frontSession) addDirect(e *entry) (ok bool) {
	if m, isMap := e.Def.InputSchema.(map[string]any); !isMap || m["type"] != "object" {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	def := *e.Def
	name := e.Name
	s.srv.AddTool(&def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.register(req.Session)
		return s.call(ctx, req, name, req.Params.Arguments)
	})
	return true
}

// searchInput are search_tools' arguments.
type searchInput struct {
	Query string `json:"query"`
	K     *int   `json:"k"`
	// The filter (engine.Filter), flat as retrieve_skills takes it.
	Allow      []string `json:"allow"`
	Deny       []string `json:"deny"`
	Namespaces []string `json:"namespaces"`
}

func (s *frontSession) searchHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.register(req.Session)
	var in searchInput
	if err := decodeArgs(req.Params.Arguments, &in, []string{"query", "k", "allow", "deny", "namespaces"}); err != nil {
		return toolError("search_tools: %v", err), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return toolError(`search_tools: field "query": give the task in plain words`), nil
	}
	sr := engine.Request{Query: in.Query, K: mcpcore.DefaultSearchK, Filter: engine.Filter{Allow: in.Allow, Deny: in.Deny, Namespaces: in.Namespaces}}
	var given []string // a k of 0 is out of range, not the default
	if in.K != nil {
		sr.K, given = *in.K, []string{"k"}
	}
	if err := checkRequest(sr, given...); err != nil {
		return toolError("search_tools: %v", err), nil
	}
	s.g.waitStarting(ctx)
	res := s.g.search(sr.Query, sr.K, sr.Filter, s.keeps)
	s.trace.search(in.Query)
	names := make([]string, len(res.Tools))
	for i, t := range res.Tools {
		names[i] = t.Name
	}
	s.expose(names)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.g.renderSearch(in.Query, res, s.keeps)}},
		StructuredContent: res}, nil
}

// checkRequest holds a search to the service limits (service.Service.Check) and its filter to the
// engine's rules (engine.Filter.Check), worded as the MCP tool layer words argument errors
// (mcpcore.ArgError: "allow[2]", no package prefix).
func checkRequest(req engine.Request, given ...string) error {
	err := service.Service.Check(req, given...)
	if err == nil {
		err = req.Filter.Check()
	}
	if err == nil {
		return nil
	}
	return mcpcore.ArgError(err)
}

// callInput are call_tool's arguments.
type callInput struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (s *frontSession) callHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.register(req.Session)
	var in callInput
	if err := decodeArgs(req.Params.Arguments, &in, []string{"name", "arguments"}); err != nil {
		return toolError("call_tool: %v", err), nil
	}
	if in.Name == "" {
		return toolError(`call_tool: field "name": give a tool's name as search_tools gave it (SERVER__TOOL)`), nil
	}
	if len(in.Arguments) > 0 && jsonKind(in.Arguments) != '{' && jsonKind(in.Arguments) != 'n' {
		return toolError(`call_tool: field "arguments": must be an object of the tool's arguments`), nil
	}
	return s.call(ctx, req, in.Name, in.Arguments)
}

// call forwards a call of a catalog tool and records it in the session's trace.
func (s *frontSession) call(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c := s.g.current()
	e := c.byName[name]
	if e == nil || !s.keeps(name) {
		if res := s.g.downTool(name, s.keeps); res != nil {
			return res, nil
		}
		return s.g.unknownTool(c, name, s.keeps), nil
	}
	start, t0 := s.clock.now(), time.Now()
	defer s.g.server(e.Server).track(s, req.Session, ctx)()
	res, err := s.g.forward(ctx, req, e, args)
	ok := err == nil && res != nil && !res.IsError
	s.metrics.called(e.Server, ok, time.Since(t0))
	s.trace.called(name, ok, s.clock.now().Sub(start).Milliseconds())
	return res, err
}

// unknownTool is the result of calling a name the catalog does not have, or keep (the
// client's filter) refuses: not a tool of any server, or one the configuration denies (the
// message does not tell them apart, so a denied tool stays unknown, and it suggests only
// tools keep passes).
func (g *Gateway) unknownTool(c *catalog, name string, keep func(string) bool) *mcp.CallToolResult {
	msg := fmt.Sprintf("gateway: no tool %q", short(name))
	if near := suggestions(name, c.visibleNames(keep), 3); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "; search_tools finds the tools for a task"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// downTool is the result of calling a name the catalog lacks whose server is down (never
// started, failed, restarting): its tools are not known until it lists them, and "no tool"
// would send the agent looking elsewhere for a tool that may well be there. nil when the name
// is not SERVER__TOOL of a configured server that is down, or when the configuration or keep
// (the client's filter) refuses it, which stays unknown.
func (g *Gateway) downTool(name string, keep func(string) bool) *mcp.CallToolResult {
	server, tool, ok := strings.Cut(name, sep)
	d := g.byServer[server]
	if !ok || d == nil || tool == "" || !validToolName(name) || !d.cfg.keeps(tool) || !g.cfg.keeps(name) ||
		(keep != nil && !keep(name)) {
		return nil
	}
	if _, cs, _ := d.snapshot(); cs != nil {
		return nil
	}
	return d.unavailable(tool)
}

// unavailable is the result of calling tool while the server has no session: its state and
// why it has none.
func (d *downstream) unavailable(tool string) *mcp.CallToolResult {
	st := d.status()
	why := st.State
	if st.Error != "" {
		why += "; " + st.Error
	}
	return toolError("gateway: server %s is not available (%s); tool %s was not called", d.cfg.Name, why, tool)
}

// forward calls the tool on its server within the server's timeout, passing progress both ways
// and cancellation with ctx. Failures of the gateway or the server are tool errors naming both;
// a cancelled call is the client's own doing and ends as its request context says.
func (g *Gateway) forward(ctx context.Context, req *mcp.CallToolRequest, e *entry, args json.RawMessage) (*mcp.CallToolResult, error) {
	if len(args) > maxArgumentBytes {
		return toolError("gateway: server %s, tool %s: the arguments are %d bytes, more than the gateway passes (%d); the tool was not called",
			e.Server, e.Tool, len(args), maxArgumentBytes), nil
	}
	d := g.byServer[e.Server]
	_, cs, _ := d.snapshot()
	if cs == nil {
		return d.unavailable(e.Tool), nil
	}
	params := &mcp.CallToolParams{Name: e.Tool, Arguments: map[string]any{}}
	if len(args) > 0 && jsonKind(args) == '{' {
		params.Arguments = args
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		dtok, done := g.progress.register(ctx, req.Session, tok)
		defer done()
		params.SetProgressToken(dtok)
	}
	timeout := d.cfg.Timeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, params)
	d.callEnded(cs, err != nil && cctx.Err() != nil && ctx.Err() == nil)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case cctx.Err() != nil:
			return toolError("gateway: server %s, tool %s: no result within %v (the server's timeout); the call was cancelled",
				e.Server, e.Tool, timeout), nil
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return toolError("server %s, tool %s: error %d: %s", e.Server, e.Tool, we.Code, oneLine(we.Message)), nil
		}
		return toolError("gateway: server %s, tool %s: %s", e.Server, e.Tool, oneLine(err.Error())), nil
	}
	size, err := json.Marshal(res)
	if err != nil {
		return toolError("gateway: server %s, tool %s: the result cannot be encoded: %v", e.Server, e.Tool, err), nil
	}
	if len(size) > maxResultBytes {
		return toolError("gateway: server %s, tool %s: the result is %d bytes, more than the gateway passes (%d)",
			e.Server, e.Tool, len(size), maxResultBytes), nil
	}
	return res, nil
}

// toolError is a tool result with isError set and the message as its text.
func toolError(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

// jsonKind is the first byte of a JSON value, blanks skipped; 0 for none.
func jsonKind(v json.RawMessage) byte {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// decodeArgs decodes a tool's arguments into v, refusing fields outside known, and names the
// field that is wrong.
func decodeArgs(raw json.RawMessage, v any, known []string) error {
	if len(raw) == 0 || jsonKind(raw) == 'n' {
		raw = json.RawMessage(`{}`)
	}
	if jsonKind(raw) != '{' {
		return errors.New("the arguments must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return errors.New("the arguments must be a JSON object")
	}
	for k := range fields {
		if !slices.Contains(known, k) {
			msg := fmt.Sprintf("unknown field %q", short(k))
			if near := nearest(k, known); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return errors.New(msg)
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q: want %s, got a JSON %s", te.Field, goKind(te.Type.Kind().String()), te.Value)
		}
		return errors.New("the arguments do not match the input schema")
	}
	return nil
}

func goKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "ptr":
		return "an integer"
	case "slice":
		return "an array of strings"
	}
	return k
}

// progressRelay maps the progress tokens the gateway gives downstream calls back to the front
// session and token of the call they serve.
type progressRelay struct {
	mu   sync.Mutex
	next int
	m    map[string]progressTarget
}

type progressTarget struct {
	ctx   context.Context // the front call's: over HTTP, progress goes on that call's stream
	ss    *mcp.ServerSession
	token any
}

func newProgressRelay() *progressRelay { return &progressRelay{m: map[string]progressTarget{}} }

// register gives a downstream token for a front call's token; done forgets it.
func (p *progressRelay) register(ctx context.Context, ss *mcp.ServerSession, token any) (string, func()) {
	p.mu.Lock()
	p.next++
	tok := "caskg-gw-" + strconv.Itoa(p.next)
	p.m[tok] = progressTarget{ctx, ss, token}
	p.mu.Unlock()
	// The SDK may handle a notification the server sent before its result after the result:
	// the token stays a while after the call, so that such progress still reaches the client.
	return tok, func() {
		time.AfterFunc(progressGrace, func() {
			p.mu.Lock()
			delete(p.m, tok)
			p.mu.Unlock()
		})
	}
}

// progressGrace is how long a call's progress token outlives the call.
const progressGrace = 5 * time.Second

// relayProgress passes a server's progress notification on (progressRelay.relay).
func (g *Gateway) relayProgress(ctx context.Context, params *mcp.ProgressNotificationParams) {
	g.progress.relay(ctx, params)
}

// relay passes a downstream progress notification to the front session waiting for it.
func (p *progressRelay) relay(ctx context.Context, params *mcp.ProgressNotificationParams) {
	if params == nil {
		return
	}
	tok, ok := params.ProgressToken.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	t, ok := p.m[tok]
	p.mu.Unlock()
	if !ok {
		return
	}
	// While the call runs its progress goes on its own stream (HTTP): a client reads the
	// call's stream and may not have opened a GET stream at all. After it, the stream is
	// gone, and the session's own is the only way left.
	// The call may end while the notification is being written, which cancels t.ctx and
	// drops the write: then it goes again on the session's own.
	out := &mcp.ProgressNotificationParams{ProgressToken: t.token,
		Progress: params.Progress, Total: params.Total, Message: params.Message}
	if t.ctx != nil && t.ctx.Err() == nil {
		if t.ss.NotifyProgress(t.ctx, out) == nil || t.ctx.Err() == nil {
			return
		}
	}
	_ = t.ss.NotifyProgress(ctx, out)
}

// ServeStdio serves one front session on r and w (stdin and stdout) until the client hangs
// up or ctx ends, then records the session's trace in flight. Malformed lines are answered
// and skipped (mcptransport.Transport), not the end of the session.
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	s := g.newFrontSession("")
	defer s.end()
	err := s.srv.Run(ctx, &mcptransport.Transport{Reader: r, Writer: w})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Connect serves one front session over t (an in-memory transport in tests) and returns the
// server session; the session's trace is recorded when it ends.
func (g *Gateway) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	s := g.newFrontSession("")
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	if err := s.register(ss); err != nil {
		ss.Close()
		return nil, err
	}
	return ss, nil
}

// Handler serves the front over streamable HTTP at /mcp, GET /v1/health and GET /metrics
// (metrics.go; behind the tokens like /mcp) beside it, with
// mcptransport.HTTPHandler's protections: a request that reaches a loopback address must name a
// local host (DNS rebinding), /mcp refuses cross-origin browser requests, and bodies are
// bounded.
func (g *Gateway) Handler() http.Handler {
	// The SDK asks getServer on every request; only a request without a session id starts a
	// session, and only a session's first request registers it, so the servers made for other
	// requests, used for their protocol versions only, are dropped unused.
	template := g.newFrontSession("").srv
	opt := mcptransport.HTTPOptions{
		SessionTimeout: g.opt.SessionTimeout,
		Health:         func() any { return g.health() },
		Metrics:        g.metrics.handler(),
	}
	if g.opt.Tokens != nil {
		opt.Guard = g.requireToken
	}
	h := g.checkAllowedHost(mcptransport.HTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") != "" {
			return template
		}
		return g.newFrontSession(clientOf(r)).srv
	}, opt))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		// A session's GET stream ends when its client goes away: the TypeScript SDK's close()
		// aborts it and sends no DELETE, so the session itself lives on until it times out.
		// The trace in flight is recorded now; should the client come back, its next call
		// opens another.
		if r.Method == http.MethodGet && r.URL.Path == mcptransport.MCPPath {
			g.streamClosed(r.Header.Get("Mcp-Session-Id"))
		}
	})
}

// streamClosed records the trace in flight of the HTTP session id, whose GET stream ended.
func (g *Gateway) streamClosed(id string) {
	if id == "" {
		return
	}
	g.mu.Lock()
	s := g.byID[id]
	g.mu.Unlock()
	if s != nil {
		s.trace.flush()
	}
}
