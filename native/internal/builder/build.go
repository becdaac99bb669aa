// Package builder turns a skill library into a published skill graph artifact: it
// extracts features, scores candidate edges with pluggable signal channels, computes the
// association score with the structural floor, selects a frontier, runs counterfactual probes
// on it (removal, substitution, reorder) through a pluggable Prober, calibrates each edge with a
// Beta posterior into confirmed / uncertain / rejected, and publishes a state-weighted graph
// with a bounded scaffold of unvalidated edges.
package builder

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// Variants of the pipeline (the paper's ablation table).
const (
	variantFull         = "full"          // every active channel, probes, calibration, scaffold
	VariantNoJudge      = "no-judge"      // full without the LLM judge channel
	variantSemanticOnly = "semantic-only" // candidates from the semantic channel alone, then full calibration
	VariantPublishAll   = "publish-all"   // every candidate at weight A, no probes (the GoS-like baseline)
)

// Variants lists the valid variants.
var Variants = []string{variantFull, VariantNoJudge, variantSemanticOnly, VariantPublishAll}

// Options are the build parameters. Start from DefaultOptions.
type Options struct {
	Variant      string
	Lambda       map[string]float64 // channel weights λ; a channel without data is inactive
	TauStr       float64            // structural floor threshold τ_str
	EtaStr       float64            // structural floor factor η_str
	JudgeGate    float64            // the judge runs only on candidates with preliminary A above it
	Cap          int                // most candidate targets per source
	PerChannel   int                // most targets each channel proposes per source
	Budget       int                // frontier size |F|; 0 probes every candidate; BudgetAuto: see frontierBudget
	FrontierMin  float64            // least A of a frontier edge
	EpsE         float64            // least evidence weight δ of one probe (ε_e)
	TauConfirm   float64            // c above it: confirmed (τ_c)
	TauReject    float64            // c below it: rejected
	RhoConfirmed float64            // publication factor ρ of confirmed edges
	RhoUncertain float64            // … of uncertain edges
	RhoScaffold  float64            // … of scaffold edges
	ScaffoldOut  int                // most scaffold edges out of one node
	ScaffoldIn   int                // most scaffold edges into one node
	EpsWeight    float64            // least published weight ε_w
	BodyHead     int                // runes of each body kept in the artifact
	MaxPostingDF int                // tokens shared by more skills do not propose pairs (0: automatic)
	// TaskMinRuns is how many distinct runs must share a word of their tasks before it enters
	// the memory of past tasks (engine.BuildMemory); reported runs count once per reporter,
	// and only where MinReporters reporters used it. NoTaskText leaves the memory out.
	TaskMinRuns int
	NoTaskText  bool
	// Synonyms are alias rules the index applies beside the built-in table (ReadSynonyms); nil
	// means the built-in table alone. The build state keeps them, so an update applies them again.
	Synonyms *Synonyms

	DryRun   bool           // stop after the frontier and count the model calls a build would make
	traces   []Trace        // Input.Runs (with Previous and its state reused: the new ones alone)
	Embedder embed.Embedder // the semantic channel's model; nil disables the channel and the artifact's vectors
	Prober   Prober         // answers probes; nil means the offline contract prober
	Judge    judger         // scores candidate edges for the judge channel; nil disables the channel
	Progress func(stage string, done, total int)
}

// DefaultOptions returns the build defaults: the CaSKG reference values, except where
// docs/rationale.md says why not (every candidate probed offline, uncertain edges at .75, no scaffold).
func DefaultOptions() Options {
	return Options{
		Variant: variantFull,
		Lambda: map[string]float64{
			chanSemantic: 0.25, chanLexical: 0.10, chanIO: 0.25, chanStructural: 0.20,
			chanJudge: 0.10, chanTraces: 0.20, chanRepair: 0.10,
		},
		TauStr: 0.65, EtaStr: 0.7, JudgeGate: 0.4,
		Cap: 12, PerChannel: 12,
		Budget: BudgetAuto, FrontierMin: 0.05,
		EpsE: 0.1, TauConfirm: 0.7, TauReject: 0.3,
		RhoConfirmed: 1, RhoUncertain: 0.75, RhoScaffold: 0,
		ScaffoldOut: 4, ScaffoldIn: 4,
		EpsWeight:   0.01,
		BodyHead:    2400,
		TaskMinRuns: engine.DefaultTaskMinRuns,
	}
}

// Frontier budgets. The budget bounds what probing costs, and only a prober that asks a model
// has a cost: BudgetAuto, the default, is modelBudget probed edges with a model prober and every
// candidate with the offline contract prober (see docs/rationale.md).
const (
	BudgetAuto  = -1
	modelBudget = 500
)

// edgeCandidate is a scored candidate edge.
type edgeCandidate struct {
	Source, Target int
	Phi            phis    // signal values by channel
	A              float64 // association score
	Type           graphs.Relation
	Evidence       []float64 // probe results e ∈ [0, 1] (failed probes left out)
	C              float64   // posterior mean ĉ; meaningful when probed
	Probed         bool
	State          graphs.State
}

// Report summarizes a build for people and machines.
type Report struct {
	Variant         string         `json:"variant"`
	Skills          int            `json:"skills"`
	Candidates      int            `json:"candidates"`
	PerChannel      map[string]int `json:"per_channel"` // candidates each channel proposed
	Channels        []string       `json:"active_channels"`
	Embedder        string         `json:"embedder,omitempty"`
	Frontier        int            `json:"frontier"`
	Prober          string         `json:"prober,omitempty"`
	ProbesRun       int            `json:"probes_run"`
	ProbesCached    int            `json:"probes_cached"`
	ProbesFailed    int            `json:"probes_failed"`
	ProbesAbstained int            `json:"probes_abstained,omitempty"` // answers with nothing to go on (contract prober)
	JudgeCalls      int            `json:"judge_calls"`
	Calibrated      map[string]int `json:"calibrated"` // candidates per state before publication
	Published       int            `json:"published"`
	ByState         map[string]int `json:"by_state"` // published edges per state
	ByType          map[string]int `json:"by_type"`
	TraceSkipped    int            `json:"trace_names_unknown,omitempty"`
	TraceFailures   int            `json:"trace_failures,omitempty"` // failed runs read as evidence (traceStats.addFailure)
	// Reported is what became of the runs that came with a reporter (feedback, untrusted
	// callers): how many counted and how many the agreement rule held back; nil without any.
	Reported *ReportedRuns `json:"reported,omitempty"`
	// Memory is what the memory of past tasks kept of the runs' task texts (engine.FitMemory);
	// nil without runs that carry one, or with NoTaskText.
	Memory *engine.MemoryStats `json:"memory,omitempty"`
	// TracePrior is the Beta prior (a, b) of co-use fitted on held-out runs (traceStats.fitPrior).
	TracePrior    []float64          `json:"trace_prior,omitempty"`
	Bytes         int                `json:"bytes"`
	StageSeconds  map[string]float64 `json:"stage_seconds"`
	TotalSeconds  float64            `json:"seconds"`
	FailedSamples []string           `json:"failed_samples,omitempty"` // a few failed probe answers
	Update        *updateReport      `json:"update,omitempty"`         // what caskg update reused
	PlannedProbes int                `json:"planned_probes,omitempty"` // dry run: probes and judge prompts
	PlannedCalls  int                `json:"planned_calls,omitempty"`  // dry run: of those, not cached
}

// planner is implemented by probers that call a model and cache its answers.
type planner interface {
	uncached(skills []ingest.Skill, probes []Probe, pairs [][2]int) int
}

type builder struct {
	opt     Options
	skills  []ingest.Skill
	index   map[string]int
	feat    []features
	idf     map[string]float64
	maxIDF  float64
	signals []signal
	traces  *traceStats
	vectors *graphs.Vectors
	vnorms  []int64 // squared norm of every skill's embedding (vectorNorms); nil without vectors
	encoder *graphs.QueryEncoder
	outPost map[string][]int // skills by output token, for the contract prober
	// keyMakers and keyTakers count, per declared field name, the skills that declare it as an
	// output and as an input: a field many skills return ("status", "id", "location") says little
	// about which one feeds an input, and one many skills take is mostly the caller's to give.
	keyMakers map[string]int
	keyTakers map[string]int
	rep       *Report
	rec       *recorder // what a later Update reuses; nil when not recording
	prev      *reuse    // what an Update takes over from the earlier build; nil in a full build
	// base is the number of the earlier build's runs in an update (0 in a full build): the
	// runs are numbered from 0, the earlier build's first, and opt.traces are the new ones.
	base int
	// quarterCache holds each source's least similar quarter, for substitutes (b.quarters).
	quarterCache map[int][]int
	texts        *textTable // the text vectors, flat (textTable)
	textOnce     sync.Once
}

// Input is what Build makes an artifact from.
type Input struct {
	// Skills is the library (identity by name; the caller removed duplicates). With Previous,
	// nil means the previous build's library.
	Skills []ingest.Skill
	// Options are the build parameters, from DefaultOptions (with Previous, from
	// Previous.Options()). Nil means what `caskg build` and `caskg update` use without flags:
	// those options, and the builtin semantic model learnt from the library (BuiltinEmbedder)
	// unless Embedder is set. Build does not change them.
	Options *Options
	// Runs are the successful runs, for the trace channel and the probes. With Previous, they are
	// the new runs, learned after the previous build's own (a run equal to one of those, same id
	// and skills, is left out: a log replayed whole adds only its new lines).
	Runs []Trace
	// Previous is the build state of an earlier build whose work Build reuses where the library
	// and options allow (State.Reusable says when not); Old is the artifact it belongs to.
	Previous *State
	Old      []byte
	// Embedder makes the semantic model for the library when the build needs one and Options has
	// none: a build without Previous, and one with Previous that cannot reuse it when its build
	// had vectors. It may return nil (no semantic channel; with Previous, the build fails). An
	// embedder it makes that is an io.Closer is closed when the build ends; the time it takes is
	// the report's "fit" stage.
	// With Options nil, Embedder nil means BuiltinEmbedder.
	Embedder func(skills []ingest.Skill) (embed.Embedder, error)
	State    bool // also make the build state (Result.State) for a later Build with Previous
}

// Result is what Build made.
type Result struct {
	Artifact []byte // nil for a dry run
	State    *State // with Input.State
	Report   *Report
}

// Build makes the artifact for the input's library, options and runs: with in.Previous, by
// updating that earlier build (reusing what it computed when it can, a full build otherwise);
// either way the bytes a full build of the same library, options and runs would make. Skills are
// ordered by name, so the artifact does not depend on the order they were read in.
func Build(ctx context.Context, in Input) (*Result, error) {
	var opt Options
	switch {
	case in.Options != nil:
		opt = *in.Options
	case in.Previous != nil:
		opt = in.Previous.Options()
	default:
		opt = DefaultOptions()
	}
	if in.Options == nil && in.Embedder == nil {
		in.Embedder = BuiltinEmbedder
	}
	var fit time.Duration
	var closer io.Closer
	defer func() {
		if closer != nil {
			closer.Close()
		}
	}()
	// embedder sets opt.Embedder from in.Embedder, when there is one and opt has none.
	embedder := func(opt *Options, skills []ingest.Skill) error {
		if opt.Embedder != nil || in.Embedder == nil {
			return nil
		}
		start := time.Now()
		emb, err := in.Embedder(skills)
		if err != nil {
			return err
		}
		closer, _ = emb.(io.Closer)
		opt.Embedder, fit = emb, time.Since(start)
		return nil
	}
	var data []byte
	var st *State
	var rep *Report
	var err error
	if in.Previous != nil {
		data, st, rep, err = updateFrom(ctx, in, opt, embedder)
	} else {
		opt.traces = in.Runs
		if err = embedder(&opt, in.Skills); err == nil {
			data, st, rep, err = build(ctx, in.Skills, opt, nil, in.State)
		}
	}
	if err != nil {
		return nil, err
	}
	if fit > 0 {
		rep.StageSeconds["fit"] = fit.Seconds()
	}
	return &Result{Artifact: data, State: st, Report: rep}, nil
}

// build makes the artifact for skills, can also record the build's state for a later update
// (record) and reuses what an earlier build computed (prev; nil for a full build). With prev,
// the skills and options must be prev's (update checks that): only the runs differ.
func build(ctx context.Context, skills []ingest.Skill, opt Options, prev *reuse, record bool) ([]byte, *State, *Report, error) {
	start := time.Now()
	rep := &Report{Variant: opt.Variant, PerChannel: map[string]int{}, ByState: map[string]int{},
		ByType: map[string]int{}, Calibrated: map[string]int{}, StageSeconds: map[string]float64{}}
	stage := func(name string, t time.Time) { rep.StageSeconds[name] += time.Since(t).Seconds() }
	if err := opt.Validate(); err != nil {
		return nil, nil, nil, err
	}
	if len(skills) == 0 {
		return nil, nil, nil, fmt.Errorf("builder: no skills to build from")
	}
	skills = append([]ingest.Skill(nil), skills...)
	sort.Slice(skills, func(a, b int) bool { return skills[a].Name < skills[b].Name })
	index := make(map[string]int, len(skills))
	for i, s := range skills {
		if _, dup := index[s.Name]; dup {
			return nil, nil, nil, fmt.Errorf("builder: duplicate skill name %q (%s)", s.Name, s.Source)
		}
		index[s.Name] = i
	}

	t := time.Now()
	b := &builder{opt: opt, skills: skills, index: index, rep: rep, prev: prev}
	if record && !opt.DryRun {
		b.rec = newRecorder(opt, len(skills))
	}
	if prev != nil {
		b.base = prev.log.len()
	}
	// The memory corpus is read (an update: the state's, with the new runs added), and the
	// memory of every run and the calibration's votes of the held-out runs made from it
	// (MemoryCorpus.Prepare), beside everything up to the calibration: they need only the runs
	// and the library's names.
	type corpusResult struct {
		c       *engine.MemoryCorpus
		encoded []byte // State.corpus, when recording
		err     error
	}
	corpusDone := make(chan corpusResult, 1)
	if !opt.DryRun {
		go func() {
			c, err := b.corpus()
			var enc []byte
			if c != nil {
				c.Prepare(b.memoryOptions(), len(b.skills), b.taskOf)
			}
			if c != nil && b.rec != nil {
				enc = c.AppendBinary(nil) // with the memo Prepare made, which the next update reuses
			}
			corpusDone <- corpusResult{c, enc, err}
		}()
	}
	if prev != nil {
		b.feat, b.idf = prev.feat, prev.idf // the library is the earlier build's
	} else {
		b.feat, b.idf = extractFeatures(skills, index)
	}
	b.keyMakers, b.keyTakers = countKeys(b.feat)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	var tl *runTally
	if prev != nil {
		var err error
		if tl, err = decodeTally(prev.tally, len(skills), b.base); err != nil {
			return nil, nil, nil, fmt.Errorf("builder: update: build state's runs: %w", err)
		}
	} else {
		tl = newRunTally(len(skills))
	}
	for k := range opt.traces {
		tl.add(&opt.traces[k], b.base+k, index)
	}
	if b.rec != nil {
		if len(tl.others) == 0 {
			// Without failed or reported runs, stats and what follows only read the tally's
			// maps: it is encoded beside them, off the build's path.
			done := make(chan []byte, 1)
			go func() { done <- encodeTally(tl, len(skills)) }()
			b.rec.tallyDone = done
		} else {
			b.rec.tally = encodeTally(tl, len(skills)) // before stats takes over its maps
		}
	}
	var read traceRead
	var err error
	if b.traces, read, err = tl.stats(index, b.run); err != nil {
		return nil, nil, nil, err
	}
	rep.TraceSkipped, rep.Reported = read.unknown, read.reported
	if b.traces != nil {
		rep.TracePrior = []float64{b.traces.priorA, b.traces.priorB}
		rep.TraceFailures = b.traces.failures
	}
	stage("features", t)
	if prev != nil {
		// The library is the earlier build's: so are its vectors, its query encoder and the
		// substitutes' quarters.
		b.vectors, b.encoder, b.quarterCache = prev.vectors, prev.encoder, prev.quarters
		if b.vectors != nil {
			rep.Embedder = b.vectors.Model
		}
	} else if opt.Embedder != nil {
		t = time.Now()
		var err error
		if b.vectors, b.encoder, err = embedSkills(ctx, opt.Embedder, skills); err != nil {
			return nil, nil, nil, err
		}
		rep.Embedder = opt.Embedder.ID()
		stage("embed", t)
	} else if opt.Variant == variantSemanticOnly {
		return nil, nil, nil, fmt.Errorf("builder: variant %s needs an embedder", variantSemanticOnly)
	}
	b.vnorms = b.vectorNorms()
	t = time.Now()
	b.signals = b.activeSignals()
	for _, s := range b.signals {
		if s.Lambda > 0 {
			rep.Channels = append(rep.Channels, s.Name)
		}
	}
	stage("features", t)

	t = time.Now()
	var cands []edgeCandidate
	if prev != nil {
		var err error
		if cands, err = b.updateCandidates(rep); err != nil {
			return nil, nil, nil, err
		}
	} else {
		cands = b.candidates(rep)
	}
	rep.Candidates = len(cands)
	stage("candidates", t)

	if opt.DryRun {
		if err := b.plan(ctx, cands); err != nil {
			return nil, nil, nil, err
		}
		rep.Skills = len(skills)
		rep.TotalSeconds = time.Since(start).Seconds()
		return nil, nil, rep, nil
	}
	if opt.Judge != nil && b.lambda(chanJudge) > 0 {
		t = time.Now()
		if err := b.judge(ctx, cands); err != nil {
			return nil, nil, nil, err
		}
		stage("judge", t)
	}

	var edges []graphs.Edge
	if opt.Variant == VariantPublishAll {
		t = time.Now()
		edges = publishAll(cands, opt.EpsWeight)
		stage("publish", t)
	} else {
		t = time.Now()
		frontier := b.frontier(cands)
		rep.Frontier = len(frontier)
		stage("frontier", t)

		t = time.Now()
		probe := b.probe
		if prev != nil {
			probe = b.probeUpdate
		}
		if err := probe(ctx, cands, frontier); err != nil {
			return nil, nil, nil, err
		}
		stage("probes", t)

		t = time.Now()
		b.calibrate(cands)
		edges = b.publish(cands)
		stage("publish", t)
	}

	// The build state, but for the artifact's hash and the memory corpus, is made beside the
	// artifact and the memory: the candidates are final.
	type stateResult struct {
		st  *State
		err error
	}
	stateDone := make(chan stateResult, 1)
	if b.rec != nil {
		go func() {
			st, err := b.state(cands)
			stateDone <- stateResult{st, err}
		}()
	}
	t = time.Now()
	art := &graphs.Artifact{Params: b.params()}
	for _, s := range skills {
		art.Skills = append(art.Skills, graphs.Skill{Name: s.Name, Description: s.Description,
			Source: s.Source, Body: engine.HeadRunes(s.Body, opt.BodyHead)})
	}
	art.Edges = edges
	if prev != nil && prev.lexicon != nil {
		art.Lexicon = *prev.lexicon // a function of the library alone, which is the earlier build's
	} else {
		docs := make([]engine.Doc, len(skills))
		aliases := defaultAliases.with(opt.Synonyms)
		for i, s := range skills {
			docs[i] = aliasDoc(aliases, engine.Doc{Name: s.Name, Description: s.Description, Tags: s.Tags, Schema: s.SchemaText, Body: s.Body})
		}
		art.Lexicon = engine.BuildLexicon(docs)
	}
	art.Vectors, art.Encoder = b.vectors, b.encoder
	art.Clusters = clusterVectors(art.Vectors)
	// Staged: the memory, calibrated on the artifact without it, is added without encoding the
	// rest again.
	staged, err := graphs.Stage(art)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("builder: %w", err)
	}
	data, err := staged.Encode(nil, art.Params)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("builder: %w", err)
	}
	stage("encode", t)
	t = time.Now()
	cr := <-corpusDone
	corpus := cr.c
	if cr.err != nil {
		return nil, nil, nil, cr.err
	}
	if b.rec != nil {
		b.rec.corpus = cr.encoded
	}
	if corpus != nil {
		if data, err = b.addMemory(art, staged, data, corpus); err != nil {
			return nil, nil, nil, err
		}
		stage("memory", t)
	}

	rep.Skills = len(skills)
	rep.Published = len(edges)
	for _, e := range edges {
		rep.ByState[e.State.String()]++
		rep.ByType[e.Type.String()]++
	}
	rep.Bytes = len(data)
	var st *State
	if b.rec != nil {
		sr := <-stateDone
		if sr.err != nil {
			return nil, nil, nil, sr.err
		}
		st = sr.st
		st.Artifact, st.corpus = sha256.Sum256(data), b.rec.corpus
	}
	rep.TotalSeconds = time.Since(start).Seconds()
	return data, st, rep, nil
}

// Validate rejects options outside their ranges, naming the option.
func (o *Options) Validate() error {
	known := false
	for _, v := range Variants {
		known = known || v == o.Variant
	}
	if !known {
		return fmt.Errorf("builder: unknown variant %q (want one of %v)", o.Variant, Variants)
	}
	for name, v := range o.Lambda {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("builder: lambda-%s: %v is outside [0, 1]", name, v)
		}
	}
	unit := map[string]float64{"tau-str": o.TauStr, "eta-str": o.EtaStr, "judge-gate": o.JudgeGate,
		"frontier-min": o.FrontierMin, "eps-e": o.EpsE, "tau-c": o.TauConfirm, "tau-reject": o.TauReject,
		"rho-confirmed": o.RhoConfirmed, "rho-uncertain": o.RhoUncertain, "rho-scaffold": o.RhoScaffold,
		"eps-w": o.EpsWeight}
	for name, v := range unit {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("builder: %s: %v is outside [0, 1]", name, v)
		}
	}
	switch {
	case o.TauReject > o.TauConfirm:
		return fmt.Errorf("builder: tau-reject %v is above tau-c %v", o.TauReject, o.TauConfirm)
	case o.Cap < 1 || o.PerChannel < 1:
		return fmt.Errorf("builder: cap %d and per-channel %d must be at least 1", o.Cap, o.PerChannel)
	case o.Budget < BudgetAuto:
		return fmt.Errorf("builder: budget %d: want %d (auto), 0 (every candidate) or a positive size", o.Budget, BudgetAuto)
	case o.ScaffoldOut < 0 || o.ScaffoldIn < 0 || o.BodyHead < 0:
		return fmt.Errorf("builder: scaffold caps and body-head must not be negative")
	case o.TaskMinRuns < 1:
		return fmt.Errorf("builder: task-min-runs %d must be at least 1", o.TaskMinRuns)
	}
	return nil
}

// plan counts the probes and judge prompts a build would ask and how many are not cached. When
// every judge answer is cached it applies them first, so the planned frontier is the one the
// build will probe; otherwise the frontier is estimated from the association before the judge.
func (b *builder) plan(ctx context.Context, cands []edgeCandidate) error {
	var pairs [][2]int
	judging := b.opt.Judge != nil && b.lambda(chanJudge) > 0
	if judging {
		for _, c := range cands {
			if c.A > b.opt.JudgeGate {
				pairs = append(pairs, [2]int{c.Source, c.Target})
			}
		}
	}
	jp, _ := b.opt.Judge.(planner)
	if judging && jp != nil {
		missing := jp.uncached(b.skills, nil, pairs)
		b.rep.PlannedCalls += missing
		if missing == 0 {
			if err := b.judge(ctx, cands); err != nil {
				return err
			}
			b.rep.JudgeCalls = 0 // answered from the cache; nothing was asked
		}
	}
	var probes []Probe
	if b.opt.Variant != VariantPublishAll {
		frontier := b.frontier(cands)
		b.rep.Frontier = len(frontier)
		subs := newSubstitutes(b)
		for _, k := range frontier {
			c := cands[k]
			probes = append(probes, Probe{Kind: probeRemoval, Source: c.Source, Target: c.Target},
				Probe{Kind: probeSubstitution, Source: c.Source, Target: c.Target, Substitute: subs.pick(c.Source, c.Target)},
				Probe{Kind: probeReorder, Source: c.Source, Target: c.Target})
		}
	}
	b.rep.PlannedProbes = len(probes) + len(pairs)
	if p, ok := b.opt.Prober.(planner); ok {
		b.rep.PlannedCalls += p.uncached(b.skills, probes, nil)
	}
	return nil
}

// lambda is the weight of an active channel, 0 for an inactive one.
func (b *builder) lambda(name string) float64 {
	for _, s := range b.signals {
		if s.Name == name {
			return s.Lambda
		}
	}
	return 0
}

// params records the build options in the artifact.
func (b *builder) params() map[string]any {
	lam := map[string]any{}
	for _, s := range b.signals {
		lam[s.Name] = s.Lambda
	}
	o := b.opt
	p := map[string]any{
		"variant": o.Variant, "lambda": lam, "tau_str": o.TauStr, "eta_str": o.EtaStr,
		"cap": o.Cap, "per_channel": o.PerChannel, "eps_weight": o.EpsWeight, "body_head": o.BodyHead,
		"traces": b.base + len(o.traces),
	}
	if o.TaskMinRuns != engine.DefaultTaskMinRuns {
		p["task_min_runs"] = o.TaskMinRuns
	}
	if o.NoTaskText {
		p["no_task_text"] = true
	}
	if o.Synonyms.len() > 0 {
		p["synonyms"] = o.Synonyms.hash()
	}
	if b.vectors != nil {
		p["embedder"] = b.vectors.Model
	}
	if o.Variant != VariantPublishAll {
		p["budget"], p["frontier_min"], p["eps_e"] = b.frontierBudget(), o.FrontierMin, o.EpsE
		p["tau_c"], p["tau_reject"] = o.TauConfirm, o.TauReject
		p["rho"] = map[string]any{"confirmed": o.RhoConfirmed, "uncertain": o.RhoUncertain, "scaffold": o.RhoScaffold}
		p["scaffold_caps"] = []int{o.ScaffoldOut, o.ScaffoldIn}
		name := "contract"
		if o.Prober != nil {
			name = o.Prober.Name()
		}
		p["prober"] = name
	}
	if o.Judge != nil {
		p["judge"], p["judge_gate"] = o.Judge.Name(), o.JudgeGate
	}
	return p
}

func clip(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return lo
	}
	return math.Max(lo, math.Min(hi, x))
}
