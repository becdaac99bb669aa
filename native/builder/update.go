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
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/ingest"
)

// An update makes the artifact a full build would make from an earlier build's library and
// runs plus new runs, without redoing what the runs do not touch. What a build spends its time
// on, and what an update keeps of it:
//
//   - fitting the builtin model and embedding the skills: they depend on the library alone, so
//     the vectors and query encoder are the old artifact's;
//   - scoring every source against its pool of up to 400 look-alikes (most of a build): the
//     build records, per source, the targets the channels chose before the Cap cut (recordChosen,
//     called by propose). Runs only add targets to a pool, and a target that was not among a
//     channel's best of a smaller pool cannot be among its best of a larger one, so proposing
//     over the old choice plus the source's run companions chooses exactly what proposing over
//     the whole pool would (updateCandidates);
//   - the probes: the contract prober reads the runs only for pairs the runs used together, so
//     every other answer is the old one (cachingProber); an LLM prober does not read the runs.
//
// Features, the runs' statistics, the frontier, calibration and publication are recomputed:
// they are cheap, and the runs' prior (traceStats.fitPrior) is fitted to all runs at once.
// A changed library changes the IDF of every token and the builtin model, hence every pair's
// lexical and semantic score: then Update makes a full build (the embedding and probe caches on
// disk still spare the model calls).

// StateVersion is the version of the build-state format; a state of another version is not read.
const StateVersion = 1

// StateSuffix is appended to an artifact's path to name its build state.
const StateSuffix = ".state"

// State is what a build leaves for a later Update: its inputs (library, runs, options, the
// prober, judge and embedder it used, the code that built it) and what it computed that an
// update reuses (each source's chosen targets, the probe answers). It belongs to one artifact,
// named by the artifact's SHA-256.
type State struct {
	Version  int
	Code     string       // the SHA-256 of the executable that built it (codeID)
	Artifact [32]byte     // the SHA-256 of the artifact it belongs to
	Saved    SavedOptions // the build options
	Prober   string       // "" for publish-all
	Judge    string
	Embedder string // the vectors' model id, "" without vectors
	Skills   []ingest.Skill
	Traces   []Trace
	// Chosen lists, per source (skills sorted by name), the targets its channels chose before
	// the Cap cut, in increasing order.
	Chosen [][]int32
	// Probes are the usable answers of the build's prober, sorted by key.
	Probes []SavedProbe
	// Quarters are the least similar quarters the substitutes were picked from, by source.
	Quarters []SavedQuarter
}

// SavedQuarter is the least similar quarter of a source (substitutes.leastSimilarQuarter).
type SavedQuarter struct {
	Source int32
	Skills []int32
}

// SavedOptions are the options of a build that decide its artifact, besides the runs and the
// pluggable parts (embedder, prober, judge).
type SavedOptions struct {
	Variant                                  string
	Lambda                                   []ChannelWeight // sorted by name, so the file is deterministic
	TauStr, EtaStr, JudgeGate                float64
	Cap, PerChannel, Budget                  int
	FrontierMin, EpsE, TauConfirm, TauReject float64
	RhoConfirmed, RhoUncertain, RhoScaffold  float64
	ScaffoldOut, ScaffoldIn                  int
	EpsWeight                                float64
	BodyHead, MaxPostingDF                   int
}

// ChannelWeight is a channel's λ.
type ChannelWeight struct {
	Name   string
	Weight float64
}

func saveOptions(o Options) SavedOptions {
	lam := make([]ChannelWeight, 0, len(o.Lambda))
	for name, w := range o.Lambda {
		lam = append(lam, ChannelWeight{name, w})
	}
	slices.SortFunc(lam, func(x, y ChannelWeight) int { return strings.Compare(x.Name, y.Name) })
	return SavedOptions{Variant: o.Variant, Lambda: lam, TauStr: o.TauStr, EtaStr: o.EtaStr,
		JudgeGate: o.JudgeGate, Cap: o.Cap, PerChannel: o.PerChannel, Budget: o.Budget,
		FrontierMin: o.FrontierMin, EpsE: o.EpsE, TauConfirm: o.TauConfirm, TauReject: o.TauReject,
		RhoConfirmed: o.RhoConfirmed, RhoUncertain: o.RhoUncertain, RhoScaffold: o.RhoScaffold,
		ScaffoldOut: o.ScaffoldOut, ScaffoldIn: o.ScaffoldIn, EpsWeight: o.EpsWeight,
		BodyHead: o.BodyHead, MaxPostingDF: o.MaxPostingDF}
}

func (s SavedOptions) equal(t SavedOptions) bool {
	return reflect.DeepEqual(s, t)
}

// Options returns the build options the state was built with; the pluggable parts (embedder,
// prober, judge, progress) are the caller's to set, and Traces is left empty (Update adds the
// state's runs to the new ones).
func (s *State) Options() Options {
	o := s.Saved
	lam := map[string]float64{}
	for _, c := range o.Lambda {
		lam[c.Name] = c.Weight
	}
	return Options{Variant: o.Variant, Lambda: lam, TauStr: o.TauStr, EtaStr: o.EtaStr,
		JudgeGate: o.JudgeGate, Cap: o.Cap, PerChannel: o.PerChannel, Budget: o.Budget,
		FrontierMin: o.FrontierMin, EpsE: o.EpsE, TauConfirm: o.TauConfirm, TauReject: o.TauReject,
		RhoConfirmed: o.RhoConfirmed, RhoUncertain: o.RhoUncertain, RhoScaffold: o.RhoScaffold,
		ScaffoldOut: o.ScaffoldOut, ScaffoldIn: o.ScaffoldIn, EpsWeight: o.EpsWeight,
		BodyHead: o.BodyHead, MaxPostingDF: o.MaxPostingDF}
}

// SavedProbe is one probe answer: Key is (kind, source, target, substitute).
type SavedProbe struct {
	Key     [4]int32
	E       float64
	Abstain bool
}

type probeKey = [4]int32

func compareKeys(x, y probeKey) int {
	for i := range x {
		if x[i] != y[i] {
			return int(x[i] - y[i])
		}
	}
	return 0
}

// keyLess orders probe keys as compareKeys does.
func keyLess(x, y probeKey) bool {
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// answer is the earlier build's answer to the probe of key k, if it had one.
func (r *reuse) answer(k probeKey) (ProbeResult, bool) {
	// A binary search written out: the answers are looked up once a frontier probe, and
	// slices.BinarySearchFunc's comparison callback was a tenth of an update's time.
	lo, hi := 0, len(r.probes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keyLess(r.probes[m].Key, k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.probes) || r.probes[lo].Key != k {
		return ProbeResult{}, false
	}
	p := r.probes[lo]
	return ProbeResult{E: p.E, OK: true, Abstain: p.Abstain, Cached: true}, true
}

func keyOf(p Probe) probeKey {
	return probeKey{int32(p.Kind), int32(p.Source), int32(p.Target), int32(p.Substitute)}
}

// recorder collects, during a build, what its State keeps.
type recorder struct {
	opt           SavedOptions // the options as given, before the build resolves any
	prober, judge string
	chosen        [][]int32
	probes        []SavedProbe // in the order asked; a key at most once (one frontier)
}

func newRecorder(opt Options, n int) *recorder {
	r := &recorder{opt: saveOptions(opt), chosen: make([][]int32, n)}
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

// recordChosen keeps the targets propose chose for source i before the Cap cut.
func (b *builder) recordChosen(i int, pool []int, chosen []bool) {
	if b.rec == nil {
		return
	}
	var js []int32
	for k, ok := range chosen {
		if ok {
			js = append(js, int32(pool[k]))
		}
	}
	b.rec.chosen[i] = js
}

// state assembles the State of the build that made data.
func (b *builder) state(data []byte) *State {
	st := &State{Version: StateVersion, Code: codeID(), Artifact: sha256.Sum256(data), Saved: b.rec.opt,
		Prober: b.rec.prober, Judge: b.rec.judge, Skills: b.skills, Traces: b.opt.Traces, Chosen: b.rec.chosen}
	if b.vectors != nil {
		st.Embedder = b.vectors.Model
	}
	st.Probes = b.rec.probes
	used := map[int]bool{} // the sources whose substitutes this build picked
	for _, p := range b.rec.probes {
		used[int(p.Key[1])] = true
	}
	for i, q := range b.quarterCache {
		if !used[i] {
			continue // an earlier build's, no longer on the frontier
		}
		sq := SavedQuarter{Source: int32(i), Skills: make([]int32, len(q))}
		for k, j := range q {
			sq.Skills[k] = int32(j)
		}
		st.Quarters = append(st.Quarters, sq)
	}
	slices.SortFunc(st.Quarters, func(x, y SavedQuarter) int { return int(x.Source - y.Source) })
	slices.SortFunc(st.Probes, func(x, y SavedProbe) int { return compareKeys(x.Key, y.Key) })
	return st
}

// reuse is what an update takes over from the earlier build.
type reuse struct {
	vectors  *graphs.Vectors
	encoder  *graphs.QueryEncoder
	chosen   [][]int32
	probes   []SavedProbe // sorted by key
	quarters map[int][]int
	lexicon  *graphs.Lexicon // the old artifact's
	old      *traceStats     // the earlier build's runs
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
// comment at the top of this file), then completes the candidates as a build does.
func (b *builder) updateCandidates(rep *Report, prev *reuse) []Candidate {
	n := len(b.skills)
	per := make([][]Candidate, n)
	counts := make([][]int, n)
	b.progress("candidates", 0, n)
	parallel(n, func() func(i int) {
		sc := b.newScorer()
		mark := make([]int, n)
		for i := range mark {
			mark[i] = -1
		}
		return func(i int) {
			var pool []int
			add := func(j int) {
				if j != i && mark[j] != i {
					mark[j] = i
					pool = append(pool, j)
				}
			}
			for _, j := range prev.chosen[i] {
				add(int(j))
			}
			if b.traces != nil {
				for _, j := range b.traces.neighbors[i] {
					add(j)
				}
			}
			sort.Ints(pool)
			per[i], counts[i] = b.propose(i, pool, sc)
		}
	}, func(done int) { b.progress("candidates", done, n) })
	return b.completeCandidates(b.join(per, counts, rep))
}

// wrapProber puts a cachingProber in front of the build's prober: it records every answer for
// the State and, in an update, answers from the earlier build's where the runs cannot have
// changed it. The frontier budget is resolved first, since it depends on which prober is set.
func (b *builder) wrapProber(prev *reuse) {
	if b.opt.Budget == BudgetAuto {
		b.opt.Budget = b.frontierBudget()
	}
	var inner Prober = contractProber{b}
	if b.opt.Prober != nil {
		inner = b.opt.Prober
	}
	b.opt.Prober = &cachingProber{inner: inner, b: b, prev: prev}
}

// cachingProber answers a probe of a pair no run used together, in the earlier build or now,
// from the earlier build's answers, and asks its inner prober the rest, in one call.
type cachingProber struct {
	inner Prober
	b     *builder
	prev  *reuse // nil in a full build
}

func (p *cachingProber) Name() string { return p.inner.Name() }

func (p *cachingProber) Probe(ctx context.Context, skills []ingest.Skill, probes []Probe) ([]ProbeResult, error) {
	out := make([]ProbeResult, len(probes))
	var miss []Probe
	var at []int
	for k, pr := range probes {
		if p.prev != nil && !p.touched(pr.Source, pr.Target) {
			if r, ok := p.prev.answer(keyOf(pr)); ok {
				out[k] = r
				p.record(pr, r)
				continue
			}
		}
		miss = append(miss, pr)
		at = append(at, k)
	}
	if len(miss) > 0 {
		res, err := p.inner.Probe(ctx, skills, miss)
		if err != nil {
			return nil, err
		}
		if len(res) != len(miss) {
			return nil, fmt.Errorf("%s prober answered %d of %d probes", p.inner.Name(), len(res), len(miss))
		}
		for x, r := range res {
			out[at[x]] = r
			p.record(miss[x], r)
		}
	}
	return out, nil
}

// touched reports whether runs used the pair together, in the earlier build or now: the only
// pairs whose contract answers read the runs.
func (p *cachingProber) touched(i, j int) bool {
	for _, t := range []*traceStats{p.prev.old, p.b.traces} {
		if t != nil && t.co[pair{i, j}] > 0 {
			return true
		}
	}
	return false
}

// record keeps a usable answer (a failed one is asked again next time).
func (p *cachingProber) record(pr Probe, r ProbeResult) {
	if p.b.rec != nil && r.OK {
		r.Cached, r.Raw = false, ""
		p.b.rec.probes = append(p.b.rec.probes, SavedProbe{Key: keyOf(pr), E: r.E, Abstain: r.Abstain})
	}
}

// UpdateReport says how an update went.
type UpdateReport struct {
	Mode       string `json:"mode"`             // "incremental" or "full"
	Reason     string `json:"reason,omitempty"` // why a full build
	OldTraces  int    `json:"old_traces"`
	NewTraces  int    `json:"new_traces"`
	Duplicates int    `json:"duplicate_traces,omitempty"` // new runs already in the old build, left out
}

// UpdateInput is what Update starts from.
type UpdateInput struct {
	Old    []byte         // the old artifact
	State  *State         // its build state
	Skills []ingest.Skill // the library now; nil: the state's
	Traces []Trace        // the new runs
}

// BuildState is BuildContext that also returns the build's State, for a later Update.
func BuildState(ctx context.Context, skills []ingest.Skill, opt Options) ([]byte, *State, *Report, error) {
	return build(ctx, skills, opt, nil, true)
}

// Update makes the artifact (and its State) a full build would make from the library (the
// state's when in.Skills is nil), the state's runs followed by the new ones (a run equal to one
// of the state's, same id and skills, is left out: a log replayed whole adds only its new lines)
// and opt (start from State.Options). When it cannot reuse the earlier build (Reusable says
// why) it makes a full build, which needs opt.Embedder when the earlier build had vectors.
func Update(ctx context.Context, in UpdateInput, opt Options) ([]byte, *State, *Report, error) {
	st := in.State
	if sha256.Sum256(in.Old) != st.Artifact {
		return nil, nil, nil, errors.New("builder: update: the build state belongs to another artifact (the artifact was rebuilt or replaced after it was written)")
	}
	skills := in.Skills
	if skills == nil {
		skills = st.Skills
	}
	seen := map[string]bool{}
	for _, t := range st.Traces {
		seen[traceKey(t)] = true
	}
	opt.Traces = slices.Clone(st.Traces)
	up := &UpdateReport{Mode: "incremental", OldTraces: len(st.Traces)}
	for _, t := range in.Traces {
		if seen[traceKey(t)] {
			up.Duplicates++
			continue
		}
		opt.Traces = append(opt.Traces, t)
		up.NewTraces++
	}
	var data []byte
	var nst *State
	var rep *Report
	var err error
	if up.Reason = st.Reusable(skills, opt); up.Reason != "" {
		up.Mode = "full"
		if st.Embedder != "" && opt.Embedder == nil {
			return nil, nil, nil, fmt.Errorf("builder: update: a full build is needed (%s) and no embedder was given", up.Reason)
		}
		data, nst, rep, err = build(ctx, skills, opt, nil, true)
	} else {
		prev, perr := st.reuse(in.Old)
		if perr != nil {
			return nil, nil, nil, perr
		}
		data, nst, rep, err = build(ctx, skills, opt, prev, true)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rep.Update = up
	return data, nst, rep, nil
}

// traceKey identifies a run for Update's duplicate check.
func traceKey(t Trace) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%q %v", t.ID, t.Failed)
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
	case s.Version != StateVersion:
		return fmt.Sprintf("build state version %d, this caskg reads %d", s.Version, StateVersion)
	case s.Code != codeID():
		return "the old artifact was built by another caskg executable"
	case !s.Saved.equal(saveOptions(opt)):
		return "the build options differ"
	case s.Prober != prober:
		return fmt.Sprintf("the old build was probed by %q, this one by %q", s.Prober, prober)
	case s.Judge != judge:
		return fmt.Sprintf("the old build's judge was %q, this one's %q", s.Judge, judge)
	case opt.Embedder != nil && opt.Embedder.ID() != s.Embedder:
		return fmt.Sprintf("the old build embedded with %q, this one with %q", s.Embedder, opt.Embedder.ID())
	}
	if d := LibraryDiff(s.Skills, skills); d != "" {
		return "the library changed: " + d
	}
	return ""
}

// LibraryDiff describes how the library now differs from the old one ("" when every skill is
// the same): counts of skills added, changed and removed.
func LibraryDiff(old, now []ingest.Skill) string {
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
// chosen targets, the probe answers and the old runs' statistics.
func (s *State) reuse(old []byte) (*reuse, error) {
	if len(s.Chosen) != len(s.Skills) {
		return nil, fmt.Errorf("builder: update: build state has %d chosen lists for %d skills", len(s.Chosen), len(s.Skills))
	}
	r := &reuse{chosen: s.Chosen, probes: s.Probes}
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
	n := int32(len(s.Skills))
	for _, js := range s.Chosen {
		for _, j := range js {
			if j < 0 || j >= n {
				return nil, fmt.Errorf("builder: update: build state names skill %d of %d", j, n)
			}
		}
	}
	if !slices.IsSortedFunc(s.Probes, func(x, y SavedProbe) int { return compareKeys(x.Key, y.Key) }) {
		return nil, errors.New("builder: update: build state's probe answers are not sorted")
	}
	r.quarters = make(map[int][]int, len(s.Quarters))
	for _, q := range s.Quarters {
		if q.Source < 0 || q.Source >= n {
			return nil, fmt.Errorf("builder: update: build state names skill %d of %d", q.Source, n)
		}
		js := make([]int, len(q.Skills))
		for k, j := range q.Skills {
			if j < 0 || j >= n {
				return nil, fmt.Errorf("builder: update: build state names skill %d of %d", j, n)
			}
			js[k] = int(j)
		}
		r.quarters[int(q.Source)] = js
	}
	index := make(map[string]int, len(s.Skills))
	for i, sk := range s.Skills {
		index[sk.Name] = i
	}
	r.old, _ = newTraceStats(s.Traces, index)
	return r, nil
}

// stateMagic starts a build-state file.
const stateMagic = "\x00caskg-state\n"

// EncodeState returns the bytes of a build-state file.
func EncodeState(s *State) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(stateMagic)
	if err := gob.NewEncoder(&b).Encode(s); err != nil {
		return nil, fmt.Errorf("builder: build state: %w", err)
	}
	return b.Bytes(), nil
}

// DecodeState reads a build-state file's bytes. Indexes in it are checked when an update uses
// them (State.reuse).
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
	s = &State{}
	if err := gob.NewDecoder(bytes.NewReader(rest)).Decode(s); err != nil {
		return nil, fmt.Errorf("builder: build state: %w", err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("builder: build state version %d, this caskg reads %d", s.Version, StateVersion)
	}
	return s, nil
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
