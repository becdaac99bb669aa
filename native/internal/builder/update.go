package builder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// An update makes the artifact a full build would make from an earlier build's library and
// runs plus new runs, without redoing what the runs do not touch. What a build spends its time
// on, and what an update keeps of it:
//
//   - fitting the builtin model and embedding the skills: they depend on the library alone, so
//     the vectors and query encoder are the old artifact's;
//   - the features of every skill and the library's IDF: they depend on the library alone, so
//     they are the earlier build's (State.Features);
//   - scoring every source against its pool of up to 400 look-alikes (most of a build): the
//     build records, per source, the targets the channels chose before the Cap cut (recordChosen,
//     called by choose). Runs only add targets to a pool, and a target that was not among a
//     channel's best of a smaller pool cannot be among its best of a larger one, so proposing
//     over the old choice plus the source's run companions chooses exactly what proposing over
//     the whole pool would (updateCandidates). The values of a pair on every channel but the
//     runs' depend on the library alone: the build keeps them for every pair it scored
//     (State.Pairs), and an update scores only the pairs new runs bring;
//   - the probes: the contract prober reads the runs only for pairs the runs used together, so
//     every other answer is the old one (probeUpdate); an LLM prober does not read the runs.
//     The runs of the earlier build are among the update's, so a pair they used together is
//     one the update's runs use together.
//
// The runs' statistics and channel, the association, the relation types, the frontier,
// calibration and publication are recomputed: they are cheap, and the runs' prior
// (traceStats.fitPrior) is fitted to all runs at once, so every value of the runs' channel moves.
// A changed library changes the IDF of every token and the builtin model, hence every pair's
// lexical and semantic score: then Update makes a full build (the embedding and probe caches on
// disk still spare the model calls).

// stateVersion is the version of the build-state format; a state of another version is not read.
// Version 3 kept each run's reporter (Trace.Source): a caskg that reads version 2 would drop it
// and take reported runs as trusted ones. Version 4 keeps the runs as records an update need not
// decode, what their statistics add up to and the memory's corpus (runlog.go).
const stateVersion = 4

// StateSuffix is appended to an artifact's path to name its build state.
const StateSuffix = ".state"

// State is what a build leaves for a later Update: its inputs (library, runs, options, the
// prober, judge and embedder it used, the code that built it) and what it computed that an
// update reuses (the features, each source's chosen targets, the scored pairs' values, the
// probe answers). It belongs to one artifact, named by the artifact's SHA-256.
type State struct {
	Version  int
	Code     string       // the SHA-256 of the executable that built it (codeID)
	Artifact [32]byte     // the SHA-256 of the artifact it belongs to
	Saved    savedOptions // the build options
	Prober   string       // "" for publish-all
	Judge    string
	Embedder string // the vectors' model id, "" without vectors
	Skills   []ingest.Skill
	// Features are every skill's features and the library's IDF (encodeFeatures).
	Features []byte
	// Pairs are, per source (skills sorted by name), the pairs the build scored with their
	// values on the channels but the runs', the targets the channels chose before the Cap cut,
	// and the answers of the probes (encodePairs).
	Pairs []byte
	// Quarters are the least similar quarters the substitutes were picked from, by source.
	Quarters []savedQuarter

	// skills are Skills as the file holds them, when the State was read from one: an update of
	// an unchanged library writes them again as they are.
	skills []byte
	// log is the runs, earlier builds' first (Runs); tally what the trusted successful ones add
	// up to (encodeTally); corpus the memory corpus of those with a task text
	// (engine.MemoryCorpus), nil without any or with NoTaskText.
	log    runLog
	tally  []byte
	corpus []byte
}

// NumRuns is the number of runs the build learned from.
func (s *State) NumRuns() int { return s.log.len() }

// Runs returns the runs the build learned from, in the order it read them; the runs of a build
// with NoTaskText have no task text. They are decoded on the first call.
func (s *State) Runs() ([]Trace, error) { return s.log.runs() }

// savedQuarter is the least similar quarter of a source (substitutes.leastSimilarQuarter).
type savedQuarter struct {
	Source int32
	Skills []int32
}

// savedOptions are the options of a build that decide its artifact, besides the runs and the
// pluggable parts (embedder, prober, judge).
type savedOptions struct {
	Variant                                  string
	Lambda                                   []channelWeight // sorted by name, so the file is deterministic
	TauStr, EtaStr, JudgeGate                float64
	Cap, PerChannel, Budget                  int
	FrontierMin, EpsE, TauConfirm, TauReject float64
	RhoConfirmed, RhoUncertain, RhoScaffold  float64
	ScaffoldOut, ScaffoldIn                  int
	EpsWeight                                float64
	BodyHead, MaxPostingDF                   int
	TaskMinRuns                              int
	NoTaskText                               bool
	Synonyms                                 []synonymRule // Options.Synonyms; nil without
}

// channelWeight is a channel's λ.
type channelWeight struct {
	Name   string
	Weight float64
}

func saveOptions(o Options) savedOptions {
	lam := make([]channelWeight, 0, len(o.Lambda))
	for name, w := range o.Lambda {
		lam = append(lam, channelWeight{name, w})
	}
	slices.SortFunc(lam, func(x, y channelWeight) int { return strings.Compare(x.Name, y.Name) })
	return savedOptions{Variant: o.Variant, Lambda: lam, TauStr: o.TauStr, EtaStr: o.EtaStr,
		JudgeGate: o.JudgeGate, Cap: o.Cap, PerChannel: o.PerChannel, Budget: o.Budget,
		FrontierMin: o.FrontierMin, EpsE: o.EpsE, TauConfirm: o.TauConfirm, TauReject: o.TauReject,
		RhoConfirmed: o.RhoConfirmed, RhoUncertain: o.RhoUncertain, RhoScaffold: o.RhoScaffold,
		ScaffoldOut: o.ScaffoldOut, ScaffoldIn: o.ScaffoldIn, EpsWeight: o.EpsWeight,
		BodyHead: o.BodyHead, MaxPostingDF: o.MaxPostingDF, TaskMinRuns: o.TaskMinRuns, NoTaskText: o.NoTaskText,
		Synonyms: o.Synonyms.saved()}
}

// equal reports whether the options decide the same work an update reuses. The memory of past
// tasks (TaskMinRuns, NoTaskText) is left out: every build, incremental or not, makes it anew
// from all its runs (addMemory), so a change of its options needs no full build.
func (s savedOptions) equal(t savedOptions) bool {
	s.TaskMinRuns, s.NoTaskText = t.TaskMinRuns, t.NoTaskText
	return reflect.DeepEqual(s, t)
}

// Options returns the build options the state was built with; the pluggable parts (embedder,
// prober, judge, progress) are the caller's to set, and Traces is left empty (Update adds the
// state's runs to the new ones).
func (s *State) Options() Options {
	o := s.Saved
	if o.TaskMinRuns == 0 {
		o.TaskMinRuns = engine.DefaultTaskMinRuns // a state written before runs kept their tasks
	}
	lam := map[string]float64{}
	for _, c := range o.Lambda {
		lam[c.Name] = c.Weight
	}
	opt := Options{Variant: o.Variant, Lambda: lam, TauStr: o.TauStr, EtaStr: o.EtaStr,
		JudgeGate: o.JudgeGate, Cap: o.Cap, PerChannel: o.PerChannel, Budget: o.Budget,
		FrontierMin: o.FrontierMin, EpsE: o.EpsE, TauConfirm: o.TauConfirm, TauReject: o.TauReject,
		RhoConfirmed: o.RhoConfirmed, RhoUncertain: o.RhoUncertain, RhoScaffold: o.RhoScaffold,
		ScaffoldOut: o.ScaffoldOut, ScaffoldIn: o.ScaffoldIn, EpsWeight: o.EpsWeight,
		BodyHead: o.BodyHead, MaxPostingDF: o.MaxPostingDF, TaskMinRuns: o.TaskMinRuns, NoTaskText: o.NoTaskText}
	if len(o.Synonyms) > 0 {
		opt.Synonyms = &Synonyms{rules: o.Synonyms}
	}
	return opt
}

// recorder collects, during a build, what its State keeps.
type recorder struct {
	opt           savedOptions // the options as given, before the build resolves any
	prober, judge string
	chosen        [][]int32
	chosenVals    [][]float64       // per chosen target, its values on scoredChannels
	answers       []recordedAnswers // a frontier candidate at most once
	tally, corpus []byte            // State.tally and State.corpus
	tallyDone     chan []byte       // State.tally when it is encoded beside the build
}

func newRecorder(opt Options, n int) *recorder {
	r := &recorder{opt: saveOptions(opt), chosen: make([][]int32, n), chosenVals: make([][]float64, n)}
	if opt.Variant != VariantPublishAll {
		r.prober = "contract"
		if opt.Prober != nil {
			r.prober = opt.Prober.Name()
		}
	}
	if opt.Judge != nil {
		r.judge = opt.Judge.Name()
	}
	return r
}

// recordChosen keeps the targets choose chose for source i before the Cap cut, with their
// values phis on the scored channels.
func (b *builder) recordChosen(i int, pool []int, chosen []bool, phis [][]float64) {
	if b.rec == nil {
		return
	}
	var js []int32
	var vals []float64
	for k, ok := range chosen {
		if ok {
			js = append(js, int32(pool[k]))
			for c, s := range b.signals {
				if s.Score != nil && s.Name != chanTraces {
					vals = append(vals, phis[k][c])
				}
			}
		}
	}
	b.rec.chosen[i], b.rec.chosenVals[i] = js, vals
}

// recordAnswers keeps the answers res to the probes of the frontier candidates chunk, three a
// candidate, as probe asks them; a candidate without a usable answer is not kept.
func (b *builder) recordAnswers(chunk []int, probes []Probe, res []ProbeResult) {
	if b.rec == nil {
		return
	}
	for p, k := range chunk {
		a := recordedAnswers{cand: int32(k), pairAnswers: pairAnswers{sub: int32(probes[3*p+1].Substitute)}}
		for x := range 3 {
			if r := res[3*p+x]; r.OK {
				a.usable |= 1 << x
				if r.Abstain {
					a.abstain |= 1 << x
				}
				a.e[x] = r.E
			}
		}
		if a.usable != 0 {
			b.rec.answers = append(b.rec.answers, a)
		}
	}
}

// state assembles the State of the build from the candidates cands, but for the artifact's
// hash (Artifact) and the memory corpus, which the build sets when it has them.
func (b *builder) state(cands []edgeCandidate) (*State, error) {
	st := &State{Version: stateVersion, Code: codeID(), Saved: b.rec.opt,
		Prober: b.rec.prober, Judge: b.rec.judge, Skills: b.skills, tally: b.rec.tally}
	if b.rec.tallyDone != nil {
		st.tally = <-b.rec.tallyDone
	}
	runs := b.opt.traces
	if b.prev != nil {
		old := b.prev.log
		if b.opt.NoTaskText && !b.prev.noTaskText && old.len() > 0 {
			// The old runs have their task texts: they are written again without.
			all, err := old.runs()
			if err != nil {
				return nil, err
			}
			runs = append(slices.Clip(all), runs...)
			old = &runLog{}
		} else {
			st.log = old.extend()
		}
	}
	if b.opt.NoTaskText {
		// The state is kept beside the artifact, often longer: a build told to leave the task
		// texts out does not write them there either (a later update cannot bring them back).
		stripped := make([]Trace, len(runs))
		for i, t := range runs {
			t.Task = ""
			stripped[i] = t
		}
		runs = stripped
	}
	if err := st.log.append(runs); err != nil {
		return nil, err
	}
	if st.log.decoded != nil || b.prev == nil || b.prev.log.len() == 0 {
		st.log.decoded = append(st.log.decoded, runs...)
	}
	if b.vectors != nil {
		st.Embedder = b.vectors.Model
	}
	if b.prev != nil {
		st.Features = b.prev.features // the library's, hence the same bytes
	} else {
		st.Features = encodeFeatures(b.feat, b.idf)
	}
	st.Pairs = encodePairs(len(b.skills), scoredChannels(b.signals), b.rec.chosen, b.rec.chosenVals, cands, b.rec.answers)
	used := make([]bool, len(b.skills)) // the sources whose substitutes this build picked
	for _, a := range b.rec.answers {
		used[cands[a.cand].Source] = true
	}
	for i, q := range b.quarterCache {
		if !used[i] {
			continue // an earlier build's, no longer on the frontier
		}
		sq := savedQuarter{Source: int32(i), Skills: make([]int32, len(q))}
		for k, j := range q {
			sq.Skills[k] = int32(j)
		}
		st.Quarters = append(st.Quarters, sq)
	}
	slices.SortFunc(st.Quarters, func(x, y savedQuarter) int { return int(x.Source - y.Source) })
	return st, nil
}

// reuse is what an update takes over from the earlier build.
type reuse struct {
	vectors  *graphs.Vectors
	encoder  *graphs.QueryEncoder
	feat     []features
	idf      map[string]float64
	features []byte // State.Features
	pairs    *pairCache
	cols     []int // per signal of the build, its column in pairs.vals; -1 for the runs' and the judge
	quarters map[int][]int
	lexicon  *graphs.Lexicon // the old artifact's
	// The earlier build's runs (the state's log), the tally of the trusted successful ones and
	// the memory corpus; noTaskText is whether that build left task texts out.
	log        *runLog
	tally      []byte
	corpus     []byte
	noTaskText bool
	// corpusDone is the corpus decoded beside the other tables (reuse), nil when there is none
	// to decode.
	corpusDone chan decodedCorpus
}

// decodedCorpus is a memory corpus decoded, or why it did not decode.
type decodedCorpus struct {
	c   *engine.MemoryCorpus
	err error
}

// quarters is the cache of substitutes' least similar quarters, shared by every substitutes of
// the build so that the State keeps them.
func (b *builder) quarters() map[int][]int {
	if b.quarterCache == nil {
		b.quarterCache = map[int][]int{}
	}
	return b.quarterCache
}

// updateCandidates proposes, for every source, over the targets the earlier build chose for it
// and its run companions, which chooses what proposing over its whole pool would (see the
// comment at the top of this file), then completes the candidates as a build does. A pair the
// earlier build scored is not scored again (pairScores).
func (b *builder) updateCandidates(rep *Report) ([]edgeCandidate, error) {
	prev := b.prev
	if want := scoredChannels(b.signals); !slices.Equal(prev.pairs.channels, want) {
		return nil, fmt.Errorf("builder: update: the build state scored the channels %v, this build scores %v", prev.pairs.channels, want)
	}
	prev.cols = make([]int, len(b.signals))
	col := 0
	for c, s := range b.signals {
		prev.cols[c] = -1
		if s.Score != nil && s.Name != chanTraces {
			prev.cols[c] = col
			col++
		}
	}
	n := len(b.skills)
	pc := prev.pairs
	per := make([]proposals, n)
	counts := make([][]int, n)
	b.progress("candidates", 0, n)
	parallel(n, func() func(i int) {
		sc := b.newScorer()
		mark := make([]int, n)
		for i := range mark {
			mark[i] = -1
		}
		var pool, missing []int
		var phis [][]float64
		var buf []float64
		return func(i int) {
			pool = pool[:0]
			add := func(j int) {
				if j != i && mark[j] != i {
					mark[j] = i
					pool = append(pool, j)
				}
			}
			for e := pc.start[i]; e < pc.start[i+1]; e++ {
				if pc.chosen[e] {
					add(int(pc.target[e]))
				}
			}
			if b.traces != nil {
				for _, j := range b.traces.neighbors[i] {
					add(j)
				}
			}
			sort.Ints(pool)
			ns := len(b.signals)
			if need := len(pool) * ns; cap(buf) < need {
				buf = make([]float64, need)
			}
			phis, missing = phis[:0], missing[:0]
			for k, j := range pool {
				phi := buf[k*ns : (k+1)*ns]
				if !b.cachedScore(i, j, phi) {
					missing = append(missing, k)
				}
				phis = append(phis, phi)
			}
			if len(missing) > 0 {
				js := make([]int, len(missing))
				for x, k := range missing {
					js[x] = pool[k]
				}
				for x, phi := range sc.scores(i, js) {
					copy(phis[missing[x]], phi)
				}
			}
			per[i], counts[i] = b.choose(i, pool, phis)
		}
	}, func(done int) { b.progress("candidates", done, n) })
	return b.completeCandidates(b.joinProposals(per, counts, rep)), nil
}

// cachedScore sets phi to the values of the pair (i, j) on every channel, in the order of
// b.signals, when the earlier build scored the pair: its values on the channels but the runs',
// and the runs' value now. It reports whether it did.
func (b *builder) cachedScore(i, j int, phi []float64) bool {
	pc := b.prev.pairs
	e := pc.find(i, j)
	if e < 0 {
		return false
	}
	vals := pc.vals[e*len(pc.channels) : (e+1)*len(pc.channels)]
	for c, s := range b.signals {
		switch col := b.prev.cols[c]; {
		case col >= 0:
			phi[c] = vals[col]
		case s.Name == chanTraces:
			phi[c] = b.trace(i, j)
		default:
			phi[c] = 0
		}
	}
	return true
}

// probeUpdate gives every frontier candidate whose pair no run used the earlier build's answers,
// when it has all three, and probes the rest (probe).
func (b *builder) probeUpdate(ctx context.Context, cands []edgeCandidate, frontier []int) error {
	pc := b.prev.pairs
	// The candidates in index order, which is source order, as the table is: the frontier's
	// order (by association) would read both at random.
	answer := make([]int32, len(cands)) // an index into pc.answers + 1, 0 for none
	for _, k := range frontier {
		answer[k] = -1
	}
	cached := make([]int, 0, len(frontier))
	for k := range cands {
		if answer[k] == 0 {
			continue
		}
		answer[k] = 0
		c := &cands[k]
		if b.traces != nil && b.traces.co.co(c.Source, c.Target) > 0 {
			continue
		}
		if e := pc.find(c.Source, c.Target); e >= 0 && pc.answer[e] >= 0 && pc.answers[pc.answer[e]].usable == 7 {
			answer[k] = pc.answer[e] + 1
			cached = append(cached, k)
		}
	}
	res := make([]ProbeResult, 0, 3*len(cached))
	if b.rec != nil {
		b.rec.answers = slices.Grow(b.rec.answers, len(frontier))
	}
	for _, k := range cached {
		a := &pc.answers[answer[k]-1]
		for x := range 3 {
			res = append(res, ProbeResult{E: a.e[x], OK: true, Abstain: a.abstain>>x&1 != 0, Cached: true})
		}
		if b.rec != nil {
			b.rec.answers = append(b.rec.answers, recordedAnswers{cand: int32(k), pairAnswers: *a})
		}
		cands[k].Probed = true
	}
	b.apply(cands, cached, nil, res) // no probe is named: every answer is usable
	rest := make([]int, 0, len(frontier)-len(cached))
	for _, k := range frontier {
		if answer[k] == 0 {
			rest = append(rest, k)
		}
	}
	return b.probe(ctx, cands, rest)
}

// updateReport says how an update went.
type updateReport struct {
	Mode       string `json:"mode"`             // "incremental" or "full"
	Reason     string `json:"reason,omitempty"` // why a full build
	OldTraces  int    `json:"old_traces"`
	NewTraces  int    `json:"new_traces"`
	Duplicates int    `json:"duplicate_traces,omitempty"` // new runs already in the old build, left out
}

// updateFrom is Build with in.Previous: the artifact (and, with in.State, its State) a full build
// would make from the library (the previous build's when in.Skills is nil), the previous runs
// followed by in.Runs and opt (Build's reading of in.Options). When it cannot reuse the previous build (Reusable says
// why) it makes a full build, which needs an embedder (Options.Embedder, or one embedder makes
// from in.Embedder) when the previous build had vectors.
func updateFrom(ctx context.Context, in Input, opt Options, embedder func(*Options, []ingest.Skill) error) ([]byte, *State, *Report, error) {
	st := in.Previous
	// The artifact's hash is checked beside the duplicate check and the decoding of what the
	// update reuses, which would otherwise wait for it on one core; an error they meet is
	// reported only once the hash has said the state is the artifact's.
	belongs := make(chan bool, 1)
	go func() { belongs <- sha256.Sum256(in.Old) == st.Artifact }()
	var checked error
	check := func() error {
		if belongs != nil {
			if !<-belongs {
				checked = errors.New("builder: update: the build state belongs to another artifact (the artifact was rebuilt or replaced after it was written)")
			}
			belongs = nil
		}
		return checked
	}
	fail := func(err error) ([]byte, *State, *Report, error) {
		if e := check(); e != nil {
			return nil, nil, nil, e
		}
		return nil, nil, nil, err
	}
	skills := in.Skills
	if skills == nil {
		skills = st.Skills
	}
	old := &st.log
	up := &updateReport{Mode: "incremental", OldTraces: old.len()}
	// A new run with the Key of an old one is left out: the old runs with the keyHash of a new
	// one (the index read once, against the few new hashes), each compared whole.
	byHash := make(map[uint64][]int32, len(in.Runs))
	for k := range in.Runs {
		byHash[keyHash(&in.Runs[k])] = nil
	}
	for i := range old.len() {
		h := old.hash(i)
		if same, ok := byHash[h]; ok {
			byHash[h] = append(same, int32(i))
		}
	}
	var fresh []Trace
	for k := range in.Runs {
		t := &in.Runs[k]
		dup := false
		for _, i := range byHash[keyHash(t)] {
			o, err := old.run(int(i))
			if err != nil {
				return fail(err)
			}
			if sameKey(&o, t) {
				dup = true
				break
			}
		}
		if dup {
			up.Duplicates++
			continue
		}
		fresh = append(fresh, *t)
		up.NewTraces++
	}
	var data []byte
	var nst *State
	var rep *Report
	var err error
	if up.Reason = st.Reusable(skills, opt); up.Reason != "" {
		if err := check(); err != nil {
			return nil, nil, nil, err
		}
		up.Mode = "full"
		if st.Embedder != "" {
			if err := embedder(&opt, skills); err != nil {
				return nil, nil, nil, err
			}
			if opt.Embedder == nil {
				return nil, nil, nil, fmt.Errorf("builder: update: a full build is needed (%s) and no embedder was given", up.Reason)
			}
		}
		all, rerr := old.runs()
		if rerr != nil {
			return nil, nil, nil, rerr
		}
		opt.traces = append(slices.Clip(all), fresh...)
		data, nst, rep, err = build(ctx, skills, opt, nil, in.State)
	} else {
		prev, perr := st.reuse(in.Old)
		if perr != nil {
			return fail(perr)
		}
		if err := check(); err != nil {
			return nil, nil, nil, err
		}
		opt.traces = fresh
		data, nst, rep, err = build(ctx, skills, opt, prev, in.State)
		if err == nil && nst != nil && in.Skills == nil {
			nst.skills = st.skills // the same library, so the same bytes
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rep.Update = up
	return data, nst, rep, nil
}

// Key identifies a run for an update's duplicate check: a new run with the key of an old one is
// left out (a full build counts both). The gateway's learning loop plans with it.
func (t Trace) Key() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%q %v %q", t.ID, t.Failed, t.Source)
	for _, s := range t.Skills {
		fmt.Fprintf(&b, "\x00%s", s)
	}
	return b.String()
}

// Reusable returns why an update with this library and these options cannot reuse the state
// ("" when it can): another state version, another caskg, other options, prober or judge, or a
// changed library.
func (s *State) Reusable(skills []ingest.Skill, opt Options) string {
	prober, judge := "", ""
	if opt.Variant != VariantPublishAll {
		prober = "contract"
		if opt.Prober != nil {
			prober = opt.Prober.Name()
		}
	}
	if opt.Judge != nil {
		judge = opt.Judge.Name()
	}
	switch {
	case s.Version != stateVersion:
		return fmt.Sprintf("build state version %d, this caskg reads %d", s.Version, stateVersion)
	case s.Code != codeID():
		return "the old artifact was built by another caskg executable"
	case !reflect.DeepEqual(s.Saved.Synonyms, opt.Synonyms.saved()):
		return "the synonyms differ"
	case !s.Saved.equal(saveOptions(opt)):
		return "the build options differ"
	case s.Prober != prober:
		return fmt.Sprintf("the old build was probed by %q, this one by %q", s.Prober, prober)
	case s.Judge != judge:
		return fmt.Sprintf("the old build's judge was %q, this one's %q", s.Judge, judge)
	case opt.Embedder != nil && opt.Embedder.ID() != s.Embedder:
		return fmt.Sprintf("the old build embedded with %q, this one with %q", s.Embedder, opt.Embedder.ID())
	}
	if d := libraryDiff(s.Skills, skills); d != "" {
		return "the library changed: " + d
	}
	return ""
}

// libraryDiff describes how the library now differs from the old one ("" when every skill is
// the same): counts of skills added, changed and removed.
func libraryDiff(old, now []ingest.Skill) string {
	if len(old) == len(now) && (len(old) == 0 || &old[0] == &now[0]) {
		return "" // the same slice: an update of the state's own library
	}
	h := make(map[string][32]byte, len(old))
	for _, s := range old {
		h[s.Name] = skillHash(s)
	}
	var added, changed, removed int
	names := map[string]bool{}
	for _, s := range now {
		names[s.Name] = true
		switch oh, ok := h[s.Name]; {
		case !ok:
			added++
		case oh != skillHash(s):
			changed++
		}
	}
	for _, s := range old {
		if !names[s.Name] {
			removed++
		}
	}
	if added+changed+removed == 0 {
		return ""
	}
	return fmt.Sprintf("%d skills added, %d changed, %d removed", added, changed, removed)
}

// skillHash is the SHA-256 of every field of a skill the build reads (nil and empty lists
// alike).
func skillHash(s ingest.Skill) [32]byte {
	h := sha256.New()
	str := func(x string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(x)))
		h.Write(n[:])
		io.WriteString(h, x)
	}
	strs := func(xs []string) {
		str(fmt.Sprint(len(xs)))
		for _, x := range xs {
			str(x)
		}
	}
	fields := func(fs []ingest.Field) {
		str(fmt.Sprint(len(fs)))
		for _, f := range fs {
			str(f.Name)
			str(f.Type)
			str(f.Description)
			str(fmt.Sprint(f.Required))
		}
	}
	str(s.Name)
	str(s.Title)
	str(s.Description)
	str(s.Source)
	str(fmt.Sprint(s.Line))
	str(s.Kind)
	str(s.Body)
	strs(s.Tags)
	fields(s.Inputs)
	fields(s.Outputs)
	strs(s.DependsOn)
	str(s.SchemaText)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// reuse decodes what an update takes over: the old artifact's vectors and query encoder, the
// features, the scored pairs with their chosen targets and probe answers, and the substitutes'
// quarters.
func (s *State) reuse(old []byte) (*reuse, error) {
	n := len(s.Skills)
	r := &reuse{features: s.Features, log: &s.log, tally: s.tally, corpus: s.corpus, noTaskText: s.Saved.NoTaskText}
	// The tables are decoded side by side; the memory corpus too, which the build takes when it
	// needs it (builder.corpus).
	if s.corpus != nil && !s.Saved.NoTaskText {
		done := make(chan decodedCorpus, 1)
		go func() {
			c, err := engine.DecodeMemoryCorpus(s.corpus, n)
			done <- decodedCorpus{c, err}
		}()
		r.corpusDone = done
	}
	pairsDone := make(chan error, 1)
	go func() {
		var err error
		r.pairs, err = decodePairs(s.Pairs, n)
		pairsDone <- err
	}()
	var err error
	if r.feat, r.idf, err = decodeFeatures(s.Features, n); err != nil {
		<-pairsDone
		return nil, fmt.Errorf("builder: update: build state's features: %w", err)
	}
	if err := <-pairsDone; err != nil {
		return nil, fmt.Errorf("builder: update: build state's pairs: %w", err)
	}
	g, err := graphs.Decode(old)
	if err != nil {
		return nil, fmt.Errorf("builder: update: old artifact: %w", err)
	}
	a, err := g.Artifact()
	if err != nil {
		return nil, fmt.Errorf("builder: update: old artifact: %w", err)
	}
	r.lexicon = &a.Lexicon
	if s.Embedder != "" {
		if a.Vectors == nil || a.Vectors.Model != s.Embedder {
			return nil, fmt.Errorf("builder: update: the old artifact has no vectors of %q", s.Embedder)
		}
		r.vectors, r.encoder = a.Vectors, a.Encoder
	}
	r.quarters = make(map[int][]int, len(s.Quarters))
	for _, q := range s.Quarters {
		if q.Source < 0 || int(q.Source) >= n {
			return nil, fmt.Errorf("builder: update: build state names skill %d of %d", q.Source, n)
		}
		js := make([]int, len(q.Skills))
		for k, j := range q.Skills {
			if j < 0 || int(j) >= n {
				return nil, fmt.Errorf("builder: update: build state names skill %d of %d", j, n)
			}
			js[k] = int(j)
		}
		r.quarters[int(q.Source)] = js
	}
	return r, nil
}

// stateMagic starts a build-state file. The layout, little-endian:
//
//	magic
//	u32 length, the State in gob without Skills, Features and Pairs
//	u32 length, Skills in gob
//	u32 length, Features
//	u32 length, Pairs
//	u32 length, the runs' records; u32 length, their index (runlog.go)
//	u32 length, the runs' tally (encodeTally)
//	u32 length, the memory corpus (engine.MemoryCorpus.AppendBinary); 0 without one
//	u32 CRC-32C of everything before it
//
// The tables stay out of gob, which would copy them twice each way, and the library has a gob
// of its own, which an update of the same library copies rather than encodes again. The
// checksum makes a damaged file refused rather than read as another build's state.
const stateMagic = "\x00caskg-state\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeState returns the bytes of a build-state file.
func EncodeState(s *State) ([]byte, error) {
	var g bytes.Buffer
	head := *s
	head.Skills, head.Features, head.Pairs, head.skills = nil, nil, nil, nil
	if err := gob.NewEncoder(&g).Encode(&head); err != nil {
		return nil, fmt.Errorf("builder: build state: %w", err)
	}
	skills := s.skills
	if skills == nil {
		var k bytes.Buffer
		size := 0
		for _, sk := range s.Skills {
			size += len(sk.Body) + len(sk.Description) + len(sk.SchemaText) + 256
		}
		k.Grow(size)
		if err := gob.NewEncoder(&k).Encode(s.Skills); err != nil {
			return nil, fmt.Errorf("builder: build state: %w", err)
		}
		skills = k.Bytes()
	}
	// A part is one or two pieces: the runs' records are their head and the rest (runLog). The
	// pieces are copied and checksummed over the cores (gather), the lengths between them
	// made first.
	lens := make([]byte, 0, 8*4)
	pieces := [][]byte{[]byte(stateMagic)}
	for _, part := range [][2][]byte{{g.Bytes()}, {skills}, {s.Features}, {s.Pairs}, {s.log.head, s.log.records},
		{s.log.index}, {s.tally}, {s.corpus}} {
		if int64(len(part[0]))+int64(len(part[1])) > math.MaxUint32 {
			return nil, errors.New("builder: build state: a part is over 4 GB")
		}
		lens = binary.LittleEndian.AppendUint32(lens, uint32(len(part[0])+len(part[1])))
		pieces = append(pieces, lens[len(lens)-4:], part[0], part[1])
	}
	out, sum := gather(pieces, 4)
	return binary.LittleEndian.AppendUint32(out, sum), nil
}

// DecodeState reads a build-state file's bytes; the State's tables are slices of data. Indexes
// in it are checked when an update uses them (State.reuse).
func DecodeState(data []byte) (s *State, err error) {
	rest, ok := bytes.CutPrefix(data, []byte(stateMagic))
	if !ok {
		return nil, errors.New("builder: not a caskg build state")
	}
	// encoding/gob is not hardened against corrupt input: a panic is a corrupt file.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("builder: build state: corrupt: %v", r)
		}
	}()
	if len(rest) < 4 || binary.LittleEndian.Uint32(rest[len(rest)-4:]) != checksum(data[:len(data)-4]) {
		// A state of version 1 was the magic and the State in gob, nothing else.
		var v struct{ Version int }
		if gob.NewDecoder(bytes.NewReader(rest)).Decode(&v) == nil && v.Version != 0 && v.Version != stateVersion {
			return nil, errVersion(v.Version)
		}
		return nil, errors.New("builder: build state: corrupt (checksum mismatch); rebuild with caskg build --state")
	}
	rest = rest[:len(rest)-4]
	// The version in the gob comes first: a state of another version has other parts.
	if len(rest) >= 4 && int64(binary.LittleEndian.Uint32(rest)) <= int64(len(rest)-4) {
		var v struct{ Version int }
		l := binary.LittleEndian.Uint32(rest)
		if gob.NewDecoder(bytes.NewReader(rest[4:4+l])).Decode(&v) == nil && v.Version != stateVersion {
			return nil, errVersion(v.Version)
		}
	}
	var parts [8][]byte
	for k := range parts {
		if len(rest) < 4 || int64(binary.LittleEndian.Uint32(rest)) > int64(len(rest)-4) {
			return nil, errors.New("builder: build state: corrupt (a part runs past the end)")
		}
		l := int(binary.LittleEndian.Uint32(rest))
		parts[k], rest = rest[4:4+l:4+l], rest[4+l:]
	}
	if len(rest) != 0 {
		return nil, errors.New("builder: build state: corrupt (bytes after the last part)")
	}
	s = &State{}
	if err := gob.NewDecoder(bytes.NewReader(parts[0])).Decode(s); err != nil {
		return nil, fmt.Errorf("builder: build state: %w", err)
	}
	if s.Version != stateVersion {
		return nil, errVersion(s.Version)
	}
	if err := gob.NewDecoder(bytes.NewReader(parts[1])).Decode(&s.Skills); err != nil {
		return nil, fmt.Errorf("builder: build state: skills: %w", err)
	}
	s.skills, s.Features, s.Pairs = parts[1], parts[2], parts[3]
	s.log = runLog{records: parts[4], index: parts[5]}
	s.tally, s.corpus = parts[6], parts[7]
	if len(s.corpus) == 0 {
		s.corpus = nil
	}
	if err := s.log.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// errVersion is the error of a state of another version.
func errVersion(v int) error {
	return fmt.Errorf("builder: build state version %d, this caskg reads %d: rebuild with caskg build --state", v, stateVersion)
}

// codeID identifies the code that builds, so that a state written by another caskg (whose
// heuristics may differ) is not reused: the Go build ID the linker writes into the executable
// (it ends with a hash of the linked binary), read from its ELF note without reading the whole
// file, or else the SHA-256 of the executable.
var codeID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	if id := goBuildID(exe); id != "" {
		return "go:" + id
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%x", sha256.Sum256(data))
})

// goBuildID returns the Go build ID of the ELF executable at path, "" when it has none.
func goBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	note, err := sec.Data()
	// The note: name size, description size, type (4 bytes each), the name "Go\x00\x00",
	// then the build ID.
	if err != nil || len(note) < 16 || string(note[12:16]) != "Go\x00\x00" {
		return ""
	}
	n := int(f.ByteOrder.Uint32(note[4:8]))
	if n <= 0 || 16+n > len(note) {
		return ""
	}
	return string(note[16 : 16+n])
}
