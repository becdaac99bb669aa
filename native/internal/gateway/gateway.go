// Package gateway is `caskg gateway`: one MCP endpoint in front of many MCP servers, whose
// tool graph learns from the calls it proxies.
//
// The gateway connects to every server of an mcpServers file (LoadConfig) with the official
// Go SDK client, over stdio or streamable HTTP, keeps each connection alive with bounded
// exponential backoff, and names every tool SERVER__TOOL in one catalog, filtered by the
// file's allow and deny globs. Its front is an MCP server with two tools: search_tools, which
// ranks the catalog for a task over the learned graph (lexically before the first graph, or
// when retrieval fails), and call_tool, which forwards a call to the owning server and returns
// its result unchanged. With Options.Expose the front also lists the top tools of the
// session's latest search under their own names.
//
// Every front session is a stream of traces for the Learner: a trace starts at a search_tools
// (its query is the task) and collects the calls that follow, with their outcomes, until the
// next search, the end of the session or an idle gap. Calls made with no trace open (before
// any search, or after an idle gap) start a trace with an empty task: the builder learns
// from the order of the tools, not from the task, so they teach the graph as much.
//
// Front sessions speak the session-based MCP protocol versions (2024-11-05 to 2025-11-25): a
// trace is a session's, and the draft sessionless protocol of the SDK has none. Clients that
// ask for the draft are answered with the newest session-based version.
package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/wasm/engine"
)

// Defaults of Options.
const (
	// DefaultTraceGap ends a session's trace after this long without a call, and is how often
	// the open traces are checkpointed (Checkpointer). It is what a kill -9 can lose: an agent
	// between two steps of one task rarely waits this long, one that has gone quiet has its
	// calls on disk soon, and one that never pauses has them checkpointed.
	DefaultTraceGap = 30 * time.Second
	// DefaultMaxSessions bounds the front sessions open at once. A session costs tens of
	// kilobytes (its MCP server, its trace); 5,000 initializes once took the gateway from 19 to
	// 185 MB, and a team's agents need far fewer than 256 at a time.
	DefaultMaxSessions = 256
	// DefaultSessionTimeout closes an HTTP session no request has touched for this long: an
	// agent between two tasks comes back sooner, one that left without DELETE does not come back.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultTraceRate is how many traces a client may record a minute. An agent finishes a
	// task in seconds at best, so 60 is above any real pace, and far below the 2.4 MB in 4 s
	// one scripted session once wrote.
	DefaultTraceRate = 60
	// DefaultStartWait is how long a search_tools waits for servers still on their first
	// attempt while some of them know no tools: an agent's first search comes right after it
	// starts the gateway, and "no tools yet" then is an answer it acts on. Most servers list
	// within a second or two; one slower than this is not worth stalling the agent for.
	DefaultStartWait  = 3 * time.Second
	defaultBackoffMin = time.Second
	defaultBackoffMax = time.Minute
)

// Learner keeps the traces and the graph: a *learn.Loop in the product, whose trace and status
// types it shares. The gateway hands it the catalog when it changes, reads its graph at each
// search and records every finished trace.
type Learner interface {
	Graph() (*graphs.Graph, *engine.Engine) // (nil, nil) before the first graph
	SetCatalog(catalog []byte) error
	Record(t learn.Trace) error
	Status() learn.Status
}

// Checkpointer is a Learner that also keeps the traces still open, so that a kill -9 loses
// at most the calls of the last TraceGap: a trace is recorded when it ends, and a session that
// never pauses would otherwise keep its calls in memory only. Every TraceGap in which a trace
// changed, the gateway hands it every open trace with its calls so far, under the ID it will
// have when it ends; after a kill the learner records those it never got whole (package
// learn: traces.open.jsonl). At Close, after the sessions' traces are recorded, it hands it
// none.
type Checkpointer interface {
	Checkpoint(open []learn.Trace) error
}

// Options configure a Gateway.
type Options struct {
	// Learner keeps traces and graphs; nil: search ranks lexically and traces are not kept.
	Learner Learner
	// PreviousCatalog is the catalog of the last run (the state directory's catalog.json), so
	// that a server down at start keeps the tools it had and the catalog does not change.
	PreviousCatalog []byte
	// Expose is how many tools of a session's latest search its tools/list carries.
	Expose int
	// TraceGap ends a session's trace after this long without a call; 0 means DefaultTraceGap.
	TraceGap time.Duration
	// BackoffMin and BackoffMax bound the wait before reconnecting a failed server.
	BackoffMin, BackoffMax time.Duration
	// Version is the gateway's version, told to servers and clients.
	Version string
	// Logf receives status lines for people; nil: silent.
	Logf func(format string, a ...any)

	// Tokens, when set, make every request to the HTTP front need the bearer token of one of
	// its clients (401 otherwise); each session then belongs to its client: its traces carry
	// the source "client:NAME", which the builder counts once per client, and the config's
	// "clients" filter narrows what it sees and calls. nil: every session is trusted, as on
	// stdio.
	Tokens *Tokens
	// AllowedHosts are the names a request beyond loopback may give as its Host ("host" or
	// "host:port"): DNS-rebinding protection for a front on a LAN address. Empty: any Host. A
	// request that reaches a loopback address needs a loopback Host whatever this says.
	AllowedHosts []string
	// MaxSessions bounds the front sessions open at once; 0 means DefaultMaxSessions. A new
	// session beyond it ends the session idle longest; when every session has a request in
	// flight, the new one is refused.
	MaxSessions int
	// SessionTimeout closes an HTTP session without a request for this long (--session-idle);
	// 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// TraceRate is how many traces each client (all trusted sessions together count as one)
	// may record a minute, with a minute's worth as burst; 0 means DefaultTraceRate, negative
	// no limit. A trace over it is dropped, counted in health as traces_dropped.
	TraceRate int
	// StartWait bounds how long a search_tools waits for servers still starting (see
	// DefaultStartWait); 0 means DefaultStartWait, negative no wait.
	StartWait time.Duration

	// now and afterFunc are tests' clock (see clock); nil: the real one.
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) timer
	// dial, when set, gives the transport to a server instead of its command or URL (tests'
	// in-memory servers); nil from it means the server's own command or URL.
	dial func(ServerConfig) mcp.Transport
}

// Gateway is the running gateway. It is safe for concurrent use.
type Gateway struct {
	cfg      *Config
	opt      Options
	clock    clock
	downs    []*downstream
	byServer map[string]*downstream
	progress *progressRelay

	cat       atomic.Pointer[catalog]
	pubMu     sync.Mutex // serializes catalog publication
	handedCat *catalog   // the catalog the learner got last; under pubMu
	settled   atomic.Bool
	waited    atomic.Bool   // a search has waited StartWait in full: later ones do not wait
	handed    chan struct{} // closed once the first catalog has been published after settling

	mu       sync.Mutex
	sessions map[*frontSession]bool
	byID     map[string]*frontSession // HTTP sessions by Mcp-Session-Id
	seq      int                      // front sessions started
	runID    string                   // distinguishes this run's trace IDs from earlier runs'
	closed   bool

	traceRate rateLimiter
	metrics   *metrics

	cpMu    sync.Mutex      // serializes checkpoints
	cpTimer timer           // arms the next checkpoint; nil without a Checkpointer
	cpLast  string          // what the last checkpoint held (IDs and call counts)
	cpIDs   map[string]bool // the IDs of its traces

	roots rootsState    // the roots front sessions gave, and those they share
	subs  subscriptions // front sessions' resource subscriptions

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New starts a gateway over cfg: it connects to every server in the background and returns at
// once. Close stops it.
func New(cfg *Config, opt Options) (*Gateway, error) {
	if cfg == nil || len(cfg.Servers) == 0 {
		return nil, errors.New("gateway: no servers configured")
	}
	if opt.TraceGap <= 0 {
		opt.TraceGap = DefaultTraceGap
	}
	if opt.BackoffMin <= 0 {
		opt.BackoffMin = defaultBackoffMin
	}
	if opt.BackoffMax < opt.BackoffMin {
		opt.BackoffMax = max(defaultBackoffMax, opt.BackoffMin)
	}
	opt.Version = cmp.Or(opt.Version, "dev")
	clk := clock{now: opt.now, afterFunc: opt.afterFunc}
	if clk.now == nil {
		clk.now = time.Now
	}
	if clk.afterFunc == nil {
		clk.afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
	}
	if opt.SessionTimeout <= 0 {
		opt.SessionTimeout = DefaultSessionTimeout
	}
	opt.MaxSessions = cmp.Or(opt.MaxSessions, DefaultMaxSessions)
	opt.StartWait = cmp.Or(opt.StartWait, DefaultStartWait)
	opt.TraceRate = cmp.Or(opt.TraceRate, DefaultTraceRate)
	if opt.MaxSessions < 0 {
		return nil, fmt.Errorf("gateway: max sessions %d: must not be negative", opt.MaxSessions)
	}
	if opt.Expose < 0 {
		return nil, fmt.Errorf("gateway: expose %d: must not be negative", opt.Expose)
	}
	g := &Gateway{cfg: cfg, opt: opt, clock: clk, byServer: map[string]*downstream{}, progress: newProgressRelay(),
		sessions: map[*frontSession]bool{}, byID: map[string]*frontSession{}, handed: make(chan struct{})}
	g.traceRate.perMinute = opt.TraceRate
	// Trace IDs must not repeat across runs over the same state: the traces recorded before
	// this run make the prefix, and a run that records none leaves no ID to collide with.
	g.runID = "0"
	if opt.Learner != nil {
		g.runID = fmt.Sprint(opt.Learner.Status().TracesRecorded)
	}
	var seed map[string][]*mcp.Tool
	if len(opt.PreviousCatalog) > 0 {
		var err error
		if seed, err = parseCatalog(opt.PreviousCatalog, cfg); err != nil {
			g.logf("%v; starting without it", err)
			seed = nil
		}
	}
	for _, s := range cfg.Servers {
		d := newDownstream(g, s, seed[s.Name], downstreamOptions{clock: clk, backoffMin: opt.BackoffMin,
			backoffMax: opt.BackoffMax, version: opt.Version, logf: g.logf, dial: opt.dial})
		g.downs = append(g.downs, d)
		g.byServer[s.Name] = d
	}
	g.subs.byServer = g.byServer
	g.metrics = newMetrics(g)
	empty, err := buildCatalog(cfg, seed)
	if err != nil {
		return nil, err
	}
	g.cat.Store(empty)
	g.ctx, g.cancel = context.WithCancel(context.Background())
	if _, ok := opt.Learner.(Checkpointer); ok {
		g.cpTimer = clk.afterFunc(opt.TraceGap, g.checkpointTick)
	}
	for _, d := range g.downs {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			d.run(g.ctx)
		}()
	}
	// The learner sees the catalog once every server has had its first attempt: a catalog of
	// the first server alone would start a full build for nothing.
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for _, d := range g.downs {
			select {
			case <-d.first:
			case <-g.ctx.Done():
				return
			}
		}
		g.settled.Store(true)
		g.publish()
		close(g.handed)
	}()
	return g, nil
}

// clock is the time the gateway's parts read and the timers they arm; each part gets it when it
// is made, so that tests move every part's time by hand.
type clock struct {
	now func() time.Time
	// afterFunc arms a timer as time.AfterFunc does.
	afterFunc func(d time.Duration, f func()) timer
}

// sleep waits d by the clock, or until ctx ends.
func (c clock) sleep(ctx context.Context, d time.Duration) {
	done := make(chan struct{})
	t := c.afterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-done:
	}
}

func (g *Gateway) logf(format string, a ...any) {
	if g.opt.Logf != nil {
		g.opt.Logf(format, a...)
	}
}

// WaitSettled waits until every server has had its first attempt to connect (ready or failed)
// and the catalog has gone to the learner, or ctx ends.
func (g *Gateway) WaitSettled(ctx context.Context) error {
	for _, d := range g.downs {
		if err := waitClosed(ctx, d.first); err != nil {
			return err
		}
	}
	// settled is set before the catalog is published, so waiting for it alone could return
	// before the catalog holds the servers' tools.
	return waitClosed(ctx, g.handed)
}

// waitClosed waits until ch is closed (nil) or ctx ends (its error).
func waitClosed(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitStarting waits, up to StartWait, for the servers' first attempts when one still on
// it knows no tools (none listed, none from the previous catalog), so that a search on a cold
// start sees the tools of the servers that start in time. Once a wait has run out, later
// searches answer at once: a server that slow is down for search's purposes.
func (g *Gateway) waitStarting(ctx context.Context) {
	if g.opt.StartWait < 0 || g.waited.Load() {
		return
	}
	select {
	case <-g.handed:
		return
	default:
	}
	starting := false
	for _, d := range g.downs {
		select {
		case <-d.first:
			continue
		default:
		}
		if t, _, _ := d.snapshot(); t == nil {
			starting = true
		}
	}
	if !starting {
		return
	}
	out := make(chan struct{})
	t := g.clock.afterFunc(g.opt.StartWait, func() { close(out) })
	defer t.Stop()
	select {
	case <-g.handed:
	case <-out:
		g.waited.Store(true)
	case <-ctx.Done():
	case <-g.ctx.Done():
	}
}

// starting names the servers still on their first attempt, in config order.
func (g *Gateway) starting() []string {
	var out []string
	for _, d := range g.downs {
		select {
		case <-d.first:
		default:
			out = append(out, d.cfg.Name)
		}
	}
	return out
}

// catalogChanged rebuilds the catalog after a server's tools changed.
func (g *Gateway) catalogChanged() { g.publish() }

// publish rebuilds the catalog from the servers' tools; once settled, the learner gets it
// when it is not the catalog handed over last (the first publication after settling always
// hands one over), and the front sessions get it when it changed. A server's first listing
// may publish after settled is set and before the settling publication: handing over only
// what the learner has not had yet keeps it from getting the same catalog twice.
func (g *Gateway) publish() {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	tools := map[string][]*mcp.Tool{}
	for _, d := range g.downs {
		t, _, _ := d.snapshot()
		tools[d.cfg.Name] = t
	}
	c, err := buildCatalog(g.cfg, tools)
	if err != nil {
		g.logf("%v", err)
		return
	}
	old := g.cat.Load()
	changed := string(old.json) != string(c.json)
	if changed {
		g.cat.Store(c)
	} else {
		c = old
	}
	if g.settled.Load() && g.opt.Learner != nil && c != g.handedCat {
		g.handedCat = c
		if err := g.opt.Learner.SetCatalog(c.json); err != nil {
			g.logf("gateway: catalog: %v", err)
		}
	}
	if changed {
		g.logf("gateway: catalog: %s from %s", plural(len(c.entries), "tool"), plural(len(c.servers), "server"))
		for _, n := range c.invalid {
			g.logf("gateway: catalog: %q left out: not a valid MCP tool name (1 to 128 of A-Z a-z 0-9 _ - .)", short(n))
		}
		g.mu.Lock()
		sessions := make([]*frontSession, 0, len(g.sessions))
		for s := range g.sessions {
			sessions = append(sessions, s)
		}
		g.mu.Unlock()
		for _, s := range sessions {
			s.catalogChanged(c)
		}
	}
}

// catalog returns the current catalog JSON ({"tools": [...]} sorted by name).
func (g *Gateway) catalog() []byte { return g.cat.Load().json }

// current is the current catalog.
func (g *Gateway) current() *catalog { return g.cat.Load() }

// servers are the configured servers, in config order.
func (g *Gateway) servers() []*downstream { return g.downs }

// allows reports whether the config's allow and deny globs let a SERVER__NAME through.
func (g *Gateway) allows(name string) bool { return g.cfg.keeps(name) }

// server is the configured server of that name, nil for none.
func (g *Gateway) server(name string) *downstream { return g.byServer[name] }

// healthReport is what GET /v1/health answers.
type healthReport struct {
	Servers        []status   `json:"servers"`
	Tools          int        `json:"tools"`
	TracesRecorded int        `json:"traces_recorded"`
	TracesLearned  int        `json:"traces_learned"`
	Edges          int        `json:"edges"`
	EdgesFromUse   int        `json:"edges_from_use"`
	LastUpdate     *time.Time `json:"last_update"` // null before any graph
	Building       bool       `json:"building"`
	LastError      string     `json:"last_error,omitempty"`
	Learning       bool       `json:"learning"`       // a learner keeps traces
	TracesDropped  int64      `json:"traces_dropped"` // over a client's TraceRate
	Sessions       int        `json:"sessions"`
}

// health reports the servers' states and the learning loop's counts.
func (g *Gateway) health() healthReport {
	h := healthReport{Servers: make([]status, 0, len(g.downs)), Tools: len(g.cat.Load().entries),
		TracesDropped: g.traceRate.droppedTotal()}
	g.mu.Lock()
	h.Sessions = len(g.sessions)
	g.mu.Unlock()
	// A server's count is of its tools in the catalog: the ones the config denies or that have
	// invalid names are never callable, and a count that holds them promises tools no agent
	// can reach.
	c := g.cat.Load()
	perServer := map[string]int{}
	for _, e := range c.entries {
		perServer[e.Server]++
	}
	for _, d := range g.downs {
		st := d.status()
		st.Tools = perServer[d.cfg.Name]
		h.Servers = append(h.Servers, st)
	}
	if l := g.opt.Learner; l != nil {
		st := l.Status()
		h.Learning = true
		h.TracesRecorded, h.TracesLearned, h.Edges, h.EdgesFromUse = st.TracesRecorded, st.TracesLearned, st.Edges, st.EdgesFromUse
		h.Building, h.LastError = st.Building, st.LastError
		if !st.LastUpdate.IsZero() {
			t := st.LastUpdate.UTC()
			h.LastUpdate = &t
		}
	}
	return h
}

// Close ends every front session, recording the traces they had open, and then stops the
// servers: stdio children get their stdin closed, then SIGTERM, then SIGKILL.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	sessions := make([]*frontSession, 0, len(g.sessions))
	for s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.mu.Unlock()
	for _, s := range sessions {
		s.end()
	}
	if g.cpTimer != nil {
		g.cpTimer.Stop()
		g.checkpoint() // every trace is recorded now: none is open
	}
	g.cancel()
	g.wg.Wait()
	return nil
}

// checkpointTick checkpoints and arms the next one, until Close.
func (g *Gateway) checkpointTick() {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return
	}
	g.checkpoint()
	g.cpTimer.Reset(g.opt.TraceGap)
}

// checkpoint hands the Checkpointer every open trace, when they differ from the last
// checkpoint's (a call made, a trace begun or ended); a quiet gateway writes nothing.
func (g *Gateway) checkpoint() {
	cp, ok := g.opt.Learner.(Checkpointer)
	if !ok {
		return
	}
	g.cpMu.Lock()
	defer g.cpMu.Unlock()
	g.mu.Lock()
	sessions := make([]*frontSession, 0, len(g.sessions))
	for s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.mu.Unlock()
	var open []learn.Trace
	for _, s := range sessions {
		if tr, ok := s.trace.snapshot(); ok {
			open = append(open, tr)
		}
	}
	slices.SortFunc(open, func(a, b learn.Trace) int { return strings.Compare(a.ID, b.ID) })
	var sig strings.Builder
	for _, tr := range open {
		fmt.Fprintf(&sig, "%s:%d\n", tr.ID, len(tr.Calls))
	}
	if sig.String() == g.cpLast {
		return
	}
	if err := cp.Checkpoint(open); err != nil {
		g.logf("gateway: checkpoint of %s: %v", plural(len(open), "open trace"), err)
		return
	}
	g.cpLast = sig.String()
	g.cpIDs = map[string]bool{}
	for _, tr := range open {
		g.cpIDs[tr.ID] = true
	}
}

// dropped checkpoints at once when the last checkpoint holds the trace id, which the rate
// limiter has just dropped; Close makes its own last checkpoint.
func (g *Gateway) dropped(id string) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	g.cpMu.Lock()
	held := g.cpIDs[id]
	g.cpMu.Unlock()
	if held && !closed {
		g.checkpoint()
	}
}
