// Package learn keeps a gateway's state directory and closes its learning loop: the calls the
// gateway proxies are appended to DIR/traces.jsonl, and after every few new traces the skill
// graph is updated from them in the background and swapped in while queries go on.
//
// The directory holds:
//
//	catalog.json           the tool catalog, an MCP tools/list result (SetCatalog)
//	traces.jsonl           one trace a line, appended and fsynced (Record)
//	traces.NNNNNN.jsonl    traces.jsonl as it was when it reached Options.RotateBytes, oldest
//	                       first; read at Open before traces.jsonl, never written again
//	traces.open.jsonl      the traces sessions had open at the gateway's last Checkpoint,
//	                       recorded at the next Open when a kill kept them from ending
//	graph.skg              the current graph
//	graph.skg.state        its build state, from which an update reuses the build's work
//	graph.skg.meta         which graph and catalog belong together (meta.go)
//	graph.prev.skg(.state, .meta)   the graph before, for Rollback
//	gateway.lock           held while a Loop is open, so two never share a directory
//
// Every file but traces.jsonl is written whole and renamed into place (atomicfile), so a kill
// leaves the old file or the new, never half of one. "The traces" below are those of the
// rotated files and traces.jsonl, in that order. The graph is the one
//
//	cat DIR/traces.[0-9]*.jsonl DIR/traces.jsonl > ALL.jsonl
//	caskg build DIR/catalog.json --traces ALL.jsonl -o OUT.skg
//
// makes, byte for byte, with DIR spelled as it was given to Open (the catalog's path is stored
// in the graph): an incremental update (builder.Update) makes what a
// full build of the same traces makes, and the loop falls back to a full build wherever an
// update could not (a trace repeating a learned one, which Update leaves out and a build
// counts; a build state of another caskg executable, other options or another catalog). Two
// caveats: a bad line in traces.jsonl, skipped by the loop, makes caskg build refuse the file;
// and with no trace recorded the invocation has no --traces (caskg build refuses an empty file).
//
// An edge counts as learned from use (Status.EdgesFromUse, learned) when the successful traces
// the graph learned used its two tools together: exactly the pairs whose trace channel the
// builder scores above 0. The edge may have other evidence too; a text-only graph can have it.
//
// Rollback runs on a stopped gateway: Open holds an flock on DIR/gateway.lock, and Rollback
// refuses a directory a Loop holds.
package learn

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// defaultLearnEvery is the number of new traces between incremental updates when
// Options.LearnEvery is 0. An update of an 800-tool catalog takes well under a second (see
// BenchmarkUpdateSwap), so the bound is not cost but evidence: the trace channel needs a pair
// seen in a few runs before it moves an edge, and 25 traces are a few sessions of an agent's
// work, so a new user sees the graph learn on the first day, while a busy gateway updates at
// most once per 25 tasks (and never twice at once: requests made during a build coalesce).
const defaultLearnEvery = 25

// DefaultLearnAfterQuiet is how long traces fewer than LearnEvery wait for more before they
// are learned anyway (--learn-idle): a gateway used a few times a day must not wait days for
// its next update.
const DefaultLearnAfterQuiet = 2 * time.Minute

// Names of the files in the state directory.
const (
	CatalogFile = "catalog.json"
	TracesFile  = "traces.jsonl"
	GraphFile   = "graph.skg"
	PrevFile    = "graph.prev.skg"
	metaSuffix  = ".meta"
	lockFile    = "gateway.lock"
)

// Options configure a Loop.
type Options struct {
	// LearnEvery is the number of new traces between incremental updates; 0 means
	// defaultLearnEvery.
	LearnEvery int
	// LearnAfterQuiet is how long traces fewer than LearnEvery wait, with no new trace, before
	// they are learned anyway; 0 never (as --learn-idle 0 says): they wait for LearnEvery or
	// LearnNow. caskg gateway gives DefaultLearnAfterQuiet.
	LearnAfterQuiet time.Duration
	// Logf receives status lines for people (stderr); nil is silent.
	Logf func(format string, a ...any)
	// BuildOptions returns the options of a full build of skills; nil means what caskg build
	// uses without flags (builder.DefaultOptions). Either way the semantic model is the builtin
	// one learnt from skills, unless the options have one. An incremental update reuses the
	// options saved in the build state.
	BuildOptions func(skills []ingest.Skill) (builder.Options, error)
	// TaskMinRuns and NoTaskText are the builder's options of the memory of past tasks, for
	// every build, full or incremental, whatever the build state says: 0 means
	// engine.DefaultTaskMinRuns. With NoTaskText the traces are recorded without their task.
	TaskMinRuns int
	NoTaskText  bool
	// Synonyms are the alias rules of every build, full or incremental, whatever the build state
	// says (builder.ReadSynonyms); nil means none. A graph built with other rules is rebuilt.
	Synonyms *builder.Synonyms
	// RotateBytes is the size at which traces.jsonl is renamed to the next traces.NNNNNN.jsonl
	// and a new one started; 0 means DefaultRotateBytes, negative never. Rotated files are kept,
	// all of them: each holds traces a full build learns again (see rotate.go).
	RotateBytes int64
}

// Call is one proxied call of a trace.
type Call struct {
	Tool   string `json:"tool"`
	OK     bool   `json:"ok"`
	Millis int64  `json:"ms"`
}

// Trace is one task an agent did through the gateway: the tools it called after a search.
type Trace struct {
	ID     string
	Task   string   // the search query
	Tools  []string // SERVER__TOOL names in call order, consecutive repeats collapsed
	Failed bool     // the last call failed
	Calls  []Call
	// Source names the client whose session made the trace ("client:NAME"), "" for a trusted
	// one (stdio, loopback without tokens). The builder counts a sourced trace as a reported
	// run: once per source, and only where builder.MinReporters sources agree.
	Source string
}

// Status is what health reports of the loop.
type Status struct {
	TracesRecorded int       `json:"traces_recorded"`
	TracesLearned  int       `json:"traces_learned"` // traces the current graph was built from
	Edges          int       `json:"edges"`
	EdgesFromUse   int       `json:"edges_from_use"` // edges whose pair the graph's successful traces used together
	LastUpdate     time.Time `json:"last_update"`    // zero before any graph
	Building       bool      `json:"building"`
	LastError      string    `json:"last_error,omitempty"`
}

// Loop is an open state directory. Its methods are safe for concurrent use.
type Loop struct {
	dir, catalogPath string
	opt              Options
	lock             *os.File

	cur atomic.Pointer[current] // what queries read; swapped whole

	wmu     sync.Mutex // serializes appends to traces.jsonl
	tf      *os.File
	tsize   int64      // traces.jsonl's size after the last whole line
	rotated int        // the highest traces.NNNNNN.jsonl; under wmu
	jmu     sync.Mutex // serializes checkpoints
	catMu   sync.Mutex
	ctx     context.Context // the builds'; canceled by Close
	cancel  context.CancelFunc

	mu         sync.Mutex // guards the fields below
	traces     []builder.Trace
	first      map[string]int // trace key (Update's duplicate check) → index of its first trace
	catHash    string         // hex SHA-256 of the catalog set last; "" before SetCatalog
	want       bool           // a build was asked for since the worker last planned
	scheduled  int            // traces the newest graph or planned build covers
	building   bool
	workerDone chan struct{} // closed when the worker stops
	lastErr    string
	closed     bool
	quiet      *time.Timer // learns the traces waiting once LearnAfterQuiet passes without a new one
}

// current is one graph with everything known of it.
type current struct {
	graph    *graphs.Graph
	engine   *engine.Engine
	data     []byte         // graph.skg's bytes, the Old of the next update
	stateRaw []byte         // graph.skg.state's bytes; nil when absent or not this graph's
	state    *builder.State // decoded from stateRaw (its tables are slices of it)
	meta     meta
	metaRaw  []byte
	learned  int  // traces the graph was built from
	prefix   bool // the state's traces are the first learned traces of traces.jsonl
	fromUse  int
}

// Open opens the state directory dir, creating it when missing: it loads the graph and its
// build state when present and reads traces.jsonl, cutting off a torn last line (a kill during
// an append) and skipping bad lines, both reported through Logf. A graph that does not decode
// is reported and left to be rebuilt: SetCatalog then makes a full build. Nothing is built
// before SetCatalog.
func Open(dir string, opt Options) (*Loop, error) {
	if opt.LearnEvery < 0 {
		return nil, fmt.Errorf("learn: learn every %d traces: must not be negative", opt.LearnEvery)
	}
	opt.LearnEvery = cmp.Or(opt.LearnEvery, defaultLearnEvery)
	opt.RotateBytes = cmp.Or(opt.RotateBytes, DefaultRotateBytes)
	if opt.TaskMinRuns < 0 {
		return nil, fmt.Errorf("learn: task min runs %d: must not be negative", opt.TaskMinRuns)
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("learn: state dir %s: not a directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("learn: state dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("learn: state dir: %w", err)
	}
	if _, err := os.ReadDir(dir); err != nil {
		return nil, fmt.Errorf("learn: state dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l := &Loop{dir: dir, catalogPath: filepath.Join(dir, CatalogFile), opt: opt, lock: lock, first: map[string]int{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	fail := func(err error) (*Loop, error) {
		l.cancel()
		unlockDir(lock)
		return nil, err
	}
	if _, err := recoverOpen(dir, opt.Logf); err != nil {
		return fail(err)
	}
	if err := l.openTraces(); err != nil {
		return fail(err)
	}
	cur, err := l.loadGraph()
	if err != nil {
		l.tf.Close()
		return fail(err)
	}
	if cur != nil {
		l.cur.Store(cur)
		l.scheduled = cur.learned
	}
	return l, nil
}

// Graph returns the current graph and its engine; (nil, nil) before the first graph.
func (l *Loop) Graph() (*graphs.Graph, *engine.Engine) {
	if c := l.cur.Load(); c != nil {
		return c.graph, c.engine
	}
	return nil, nil
}

// Status reports the loop's counts; it never waits for a build or a disk write.
func (l *Loop) Status() Status {
	l.mu.Lock()
	s := Status{TracesRecorded: len(l.traces), Building: l.building, LastError: l.lastErr}
	l.mu.Unlock()
	if c := l.cur.Load(); c != nil {
		s.TracesLearned, s.Edges, s.EdgesFromUse = c.learned, c.graph.NumEdges(), c.fromUse
		s.LastUpdate = c.meta.Built
	}
	return s
}

// SetCatalog sets the tool catalog, the deterministic {"tools": [...]} JSON of every tool the
// gateway serves. It writes DIR/catalog.json when the bytes changed and, when there is no
// graph yet or the graph was built from another catalog, starts a full build in the
// background; the old graph answers meanwhile. With the graph's own catalog it only starts the
// update that traces recorded before Open are owed, if LearnEvery or more of them are.
func (l *Loop) SetCatalog(catalog []byte) error {
	hash := fmt.Sprintf("%x", sha256.Sum256(catalog))
	if err := l.open(); err != nil {
		return err
	}
	l.catMu.Lock()
	old, err := os.ReadFile(l.catalogPath)
	if err != nil || string(old) != string(catalog) {
		err = atomicWrite(l.catalogPath, catalog)
	} else {
		err = nil
	}
	l.catMu.Unlock()
	if err != nil {
		return fmt.Errorf("learn: writing catalog: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed
	}
	l.catHash = hash
	cur := l.cur.Load()
	switch {
	case cur == nil:
		l.opt.Logf("learn: no graph yet: a full build of the catalog and %d traces in the background", len(l.traces))
		l.request()
	case cur.meta.Catalog != hash:
		l.opt.Logf("learn: the catalog changed: a full build in the background; the old graph answers meanwhile")
		l.request()
	case l.otherSynonyms(cur):
		l.opt.Logf("learn: the graph was built with other synonyms: a full build in the background; the old graph answers meanwhile")
		l.request()
	case len(l.traces)-cur.learned >= l.opt.LearnEvery:
		l.request()
	}
	return nil
}

var errClosed = errors.New("learn: the loop is closed")

// Wait waits until no build is running or asked for, or ctx ends.
func (l *Loop) Wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		if !l.building {
			l.mu.Unlock()
			return nil
		}
		done := l.workerDone
		l.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops accepting traces and starts no more builds. A running build may finish until ctx
// ends; then it is canceled, and its graph is not written. Files are written whole or not at
// all, so nothing is left half-written either way.
func (l *Loop) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errClosed
	}
	l.closed = true
	if l.quiet != nil {
		l.quiet.Stop()
	}
	l.mu.Unlock()
	var errs []error
	if err := l.Wait(ctx); err != nil {
		l.cancel()
		errs = append(errs, fmt.Errorf("learn: close: the running build was canceled: %w", err))
		l.Wait(context.Background()) // the builder returns soon after its context ends
	}
	l.cancel()
	l.wmu.Lock()
	if err := l.tf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("learn: close %s: %w", TracesFile, err))
	}
	l.wmu.Unlock()
	if err := unlockDir(l.lock); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// open is errClosed once Close has begun, else nil: the writers of the trace files ask it under
// their own lock, so that nothing is written after Close.
func (l *Loop) open() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed
	}
	return nil
}
