package learn

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// request asks the worker for a build, starting it when none runs; l.mu is held. Requests made
// while a build runs coalesce into one follow-up, planned from the newest catalog and traces.
func (l *Loop) request() {
	l.want = true
	if !l.building {
		l.building = true
		l.workerDone = make(chan struct{})
		go l.work()
	}
}

// work runs builds one at a time until none is asked for.
func (l *Loop) work() {
	for {
		l.mu.Lock()
		if !l.want || l.closed {
			l.building = false
			close(l.workerDone)
			l.mu.Unlock()
			return
		}
		l.want = false
		j := l.plan()
		l.mu.Unlock()
		if j == nil {
			continue
		}
		err := l.run(j)
		l.mu.Lock()
		if err != nil {
			l.lastErr = err.Error()
			l.opt.Logf("%v; the previous graph keeps answering", err)
		} else {
			l.lastErr = ""
		}
		l.mu.Unlock()
	}
}

// job is one build: full (from the catalog and every trace) or incremental (from the current
// graph, its state and the traces after the ones it learned).
type job struct {
	full   bool
	reason string          // why a full build
	cur    *current        // the graph an update starts from
	traces []builder.Trace // full: every trace; incremental: the new ones
	n      int             // the traces the result will have learned
}

// plan chooses the next build from the catalog and traces as they are now; nil when the
// current graph has them all. l.mu is held.
func (l *Loop) plan() *job {
	if l.catHash == "" {
		return nil
	}
	cur := l.cur.Load()
	n := len(l.traces)
	all := slices.Clip(l.traces[:n]) // appends reallocate rather than write into a job's traces
	full := func(reason string) *job {
		l.scheduled = n
		return &job{full: true, reason: reason, traces: all, n: n}
	}
	switch {
	case cur == nil:
		return full("no graph yet")
	case cur.meta.Catalog != l.catHash:
		return full("the catalog changed")
	case l.otherSynonyms(cur):
		return full("the synonyms changed")
	case n == cur.learned:
		return nil
	case cur.state == nil:
		return full("the graph has no build state")
	case !cur.prefix:
		return full("the graph's build state learned other traces than the first of " + TracesFile)
	}
	for i := cur.learned; i < n; i++ {
		if l.first[l.traces[i].Key()] < cur.learned {
			// Update would leave this repeat of a learned trace out; a full build counts it.
			return full(fmt.Sprintf("trace %d repeats a learned one", i+1))
		}
	}
	l.scheduled = n
	return &job{cur: cur, traces: all[cur.learned:], n: n}
}

// run makes the job's graph and installs it.
func (l *Loop) run(j *job) error {
	start := time.Now()
	var data []byte
	var st *builder.State
	var catHash string
	if !j.full {
		// A state it cannot reuse makes a full build from the catalog as it is now, with the
		// options of this caskg, rather than Build's full build with the state's library and
		// options: after an upgrade, the new defaults.
		opt := j.cur.state.Options()
		l.taskOptions(&opt)
		if reason := j.cur.state.Reusable(j.cur.state.Skills, opt); reason != "" {
			j.full, j.reason, j.traces = true, reason, append(slices.Clip(runsOf(j.cur.state)), j.traces...)
		} else {
			res, err := builder.Build(l.ctx, builder.Input{Runs: j.traces, Previous: j.cur.state, Old: j.cur.data, State: true,
				Options: &opt, Embedder: builder.BuiltinEmbedder})
			if err != nil {
				return fmt.Errorf("learn: update: %w", err)
			}
			data, st = res.Artifact, res.State
			catHash = j.cur.meta.Catalog
		}
	}
	if j.full {
		l.opt.Logf("learn: full build (%s): %d traces", j.reason, j.n)
		var err error
		if data, st, catHash, err = l.fullBuild(j.traces); err != nil {
			return err
		}
	}
	if err := l.ctx.Err(); err != nil {
		return fmt.Errorf("learn: build canceled: %w", err)
	}
	c, err := l.install(data, st, catHash, j.n)
	if c != nil {
		mode := "an update"
		if j.full {
			mode = "a full build"
		}
		l.opt.Logf("learn: graph swapped in after %s in %.2fs: %d traces learned, %d edges, %d from use",
			mode, time.Since(start).Seconds(), c.learned, c.graph.NumEdges(), c.fromUse)
	}
	return err
}

// fullBuild builds from DIR/catalog.json as caskg build reads it (the graph stores the path)
// and traces, returning the graph, its state and the hash of the catalog it read.
func (l *Loop) fullBuild(traces []builder.Trace) ([]byte, *builder.State, string, error) {
	l.catMu.Lock()
	raw, err := os.ReadFile(l.catalogPath)
	var lib *ingest.Library
	if err == nil {
		lib, err = ingest.Load(l.catalogPath)
	}
	l.catMu.Unlock()
	if err != nil {
		return nil, nil, "", fmt.Errorf("learn: catalog: %w", err)
	}
	if n := len(lib.Problems); n > 0 {
		l.opt.Logf("learn: catalog: %d problems, the first: %v", n, lib.Problems[0])
	}
	if len(traces) == 0 {
		traces = nil
	}
	opt := builder.DefaultOptions()
	if l.opt.BuildOptions != nil {
		if opt, err = l.opt.BuildOptions(lib.Skills); err != nil {
			return nil, nil, "", fmt.Errorf("learn: build options: %w", err)
		}
	}
	l.taskOptions(&opt)
	// The model as without options: the builtin one learnt from the catalog.
	in := builder.Input{Skills: lib.Skills, Runs: traces, State: true, Options: &opt, Embedder: builder.BuiltinEmbedder}
	res, err := builder.Build(l.ctx, in)
	if err != nil {
		return nil, nil, "", fmt.Errorf("learn: build: %w", err)
	}
	return res.Artifact, res.State, fmt.Sprintf("%x", sha256.Sum256(raw)), nil
}

// otherSynonyms reports whether the graph cur was built with other synonyms than the loop's.
// A graph without a build state is taken as built with the loop's: it says nothing of them.
func (l *Loop) otherSynonyms(cur *current) bool {
	return cur.state != nil && !cur.state.Options().Synonyms.Equal(l.opt.Synonyms)
}

// taskOptions sets the options of the memory of past tasks and the synonyms on opt: the loop's,
// which the gateway's flags give, rather than a build state's, so that a gateway restarted with
// --no-task-text makes no memory in its next update either, and one restarted without
// --synonyms no longer applies them.
func (l *Loop) taskOptions(opt *builder.Options) {
	opt.TaskMinRuns = l.opt.TaskMinRuns
	if opt.TaskMinRuns == 0 {
		opt.TaskMinRuns = engine.DefaultTaskMinRuns
	}
	opt.NoTaskText = l.opt.NoTaskText
	opt.Synonyms = l.opt.Synonyms
}

// install writes a new graph, moving the current one to graph.prev.skg, and swaps it in. The
// previous graph is written from memory, not renamed, so graph.skg is always a whole graph.
// When only the sidecars fail to be written the graph is still swapped in (memory has them; a
// restart notices the mismatch and rebuilds) and the error returned.
func (l *Loop) install(data []byte, st *builder.State, catHash string, n int) (*current, error) {
	stateRaw, err := builder.EncodeState(st)
	if err != nil {
		return nil, fmt.Errorf("learn: %w", err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("learn: the new graph: %w", err)
	}
	m := meta{Graph: fmt.Sprintf("%x", sha256.Sum256(data)), Catalog: catHash, Traces: n, Built: time.Now().UTC().Truncate(time.Second)}
	c := &current{graph: g, engine: engine.New(g), data: data, stateRaw: stateRaw, state: st, meta: m,
		metaRaw: encodeMeta(m), learned: n, prefix: true}
	c.fromUse = countFromUse(g, runsOf(st))
	if old := l.cur.Load(); old != nil {
		if err := writeTrio(filepath.Join(l.dir, PrevFile), old.data, old.stateRaw, old.metaRaw); err != nil {
			return nil, err
		}
	}
	graph := filepath.Join(l.dir, GraphFile)
	if err := atomicWrite(graph, data); err != nil {
		return nil, fmt.Errorf("learn: %w", err)
	}
	err = writeTrio(graph, nil, stateRaw, c.metaRaw)
	l.cur.Store(c)
	return c, err
}

// writeTrio writes a graph (unless data is nil) and its sidecars at path; a nil sidecar is
// removed, so that no sidecar of another graph stays beside it.
func writeTrio(path string, data, state, metaRaw []byte) error {
	for _, f := range []struct {
		path string
		data []byte
		must bool
	}{{path, data, false}, {path + builder.StateSuffix, state, true}, {path + metaSuffix, metaRaw, true}} {
		switch {
		case f.data != nil:
			if err := atomicWrite(f.path, f.data); err != nil {
				return fmt.Errorf("learn: %w", err)
			}
		case f.must:
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("learn: %w", err)
			}
		}
	}
	return nil
}

func atomicWrite(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// loadGraph reads graph.skg and its sidecars; nil when there is no usable graph. A graph that
// does not decode, and a sidecar of another graph, are reported and left out.
func (l *Loop) loadGraph() (*current, error) {
	path := filepath.Join(l.dir, GraphFile)
	c, problems, err := readTrio(path)
	for _, p := range problems {
		l.opt.Logf("learn: %s", p)
	}
	if err != nil || c == nil {
		return nil, err
	}
	if c.state != nil {
		runs := runsOf(c.state)
		c.learned = len(runs)
		c.prefix = len(runs) <= len(l.traces)
		for i := 0; c.prefix && i < len(runs); i++ {
			c.prefix = runs[i].Key() == l.traces[i].Key()
		}
		c.fromUse = countFromUse(c.graph, runs)
	} else if c.meta.Graph != "" {
		c.learned = min(c.meta.Traces, len(l.traces))
	}
	if c.meta.Built.IsZero() {
		if fi, err := os.Stat(path); err == nil {
			c.meta.Built = fi.ModTime().UTC().Truncate(time.Second)
		}
	}
	return c, nil
}

// readTrio reads the graph at path with its state and meta; nil without a graph or with one
// that does not decode. problems say what was left out and why.
func readTrio(path string) (*current, []string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("learn: %w", err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v; it will be rebuilt from the catalog and traces", path, err)}, nil
	}
	sum := sha256.Sum256(data)
	c := &current{graph: g, engine: engine.New(g), data: data}
	var problems []string
	if raw, err := os.ReadFile(path + builder.StateSuffix); err == nil {
		st, err := builder.DecodeState(raw)
		if err == nil {
			_, err = st.Runs() // decoded once here: the loop reads them on every build
		}
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v; the next update is a full build", path+builder.StateSuffix, err))
		case st.Artifact != sum:
			problems = append(problems, fmt.Sprintf("%s belongs to another graph; the next update is a full build", path+builder.StateSuffix))
		default:
			c.state, c.stateRaw = st, raw
		}
	}
	if raw, err := os.ReadFile(path + metaSuffix); err == nil {
		switch m, err := decodeMeta(raw); {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v; the graph's catalog is unknown: rebuilt once the catalog is set", path+metaSuffix, err))
		case m.Graph != fmt.Sprintf("%x", sum):
			problems = append(problems, fmt.Sprintf("%s belongs to another graph; the graph's catalog is unknown: rebuilt once the catalog is set", path+metaSuffix))
		default:
			c.meta, c.metaRaw = m, raw
		}
	}
	return c, problems, nil
}

// runsOf is the runs a build state learned from. A state the loop holds had them decoded when
// it was read (readTrio) or made by a build that had them, so they are at hand.
func runsOf(st *builder.State) []builder.Trace {
	runs, _ := st.Runs()
	return runs
}
