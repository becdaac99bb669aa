package engine

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// The memory of past tasks: which words asked for which tools. Runs that carry their task
// text teach it (BuildMemory); the artifact keeps, per tool set, the terms of the tasks that
// used it, and only terms enough runs shared, never the text (graphs/memory.go). At query time
// the query's terms find the nearest tool sets by BM25, each of the nearest memDepth votes for
// its skills with its score over the best one (a failed set votes against), and the votes are
// added to the ranking with the weight the build calibrated on held-out runs (FitMemory): where
// past tasks recur in other words the weight is high and memory decides; where they do not it
// is zero and memory is silent. RATIONALE.md ("Why tool-set documents …") says why this design.

// Memory defaults.
const (
	// DefaultTaskMinRuns is how many distinct runs must share a term of their tasks before it
	// enters the artifact: a term of one prompt, a key or an address pasted into one task,
	// never does.
	DefaultTaskMinRuns = 3
	// DefaultPerSet bounds the distinct task texts one tool set keeps, newest first, so a
	// long-lived gateway's memory grows with the tool sets it has seen, not with its runs.
	DefaultPerSet = 64
	// memDepth is how many nearest tool sets vote, as in the reference method's 20 nearest runs.
	memDepth = 20
	// memFolds and memHeldOut bound the calibration: at most memHeldOut runs are held out, in
	// memFolds folds, each answered by a memory of the runs outside its fold.
	memFolds   = 5
	memHeldOut = 1000
	// memCalibK is how many graph results calibration reads per held-out run: a skill below
	// them has graph evidence too small to matter beside a vote.
	memCalibK = 50
)

// memWeights are the fusion weights calibration chooses from; the last is "memory decides".
var memWeights = []float64{0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 1000}

// PastRun is one run as the memory takes it: what it was asked, the skills it used (ids of the
// artifact's skills, any order), whether it failed, and who reported it ("" for a trusted run).
type PastRun struct {
	Task     string
	Skills   []int
	Failed   bool
	Reporter string
}

// MemoryOptions are BuildMemory's rules. Zero values mean the defaults.
type MemoryOptions struct {
	MinRuns      int // DefaultTaskMinRuns
	MinReporters int // reporters that must agree on a reported tool set or term; 2
	PerSet       int // DefaultPerSet
}

func (o MemoryOptions) orDefaults() MemoryOptions {
	o.MinRuns = orDefault(o.MinRuns, DefaultTaskMinRuns)
	o.MinReporters = orDefault(o.MinReporters, 2)
	o.PerSet = orDefault(o.PerSet, DefaultPerSet)
	return o
}

// MemoryStats says what BuildMemory kept and why not the rest, for build reports and inspect.
type MemoryStats struct {
	Runs         int       `json:"runs"`                  // runs remembered
	NoTask       int       `json:"runs_without_task"`     // runs with no task text (or no known skill)
	Capped       int       `json:"runs_capped"`           // runs beyond a tool set's newest PerSet tasks
	Unagreed     int       `json:"reported_unagreed"`     // reported runs of tool sets too few reporters gave
	Sets         int       `json:"tool_sets"`             // documents: distinct tool sets (failed apart)
	TermsKept    int       `json:"terms_kept"`            // terms enough runs shared
	TermsDropped int       `json:"terms_dropped"`         // terms of too few runs: never written
	Weight       float64   `json:"weight"`                // the calibrated fusion weight (FitMemory)
	HeldOut      int       `json:"held_out,omitempty"`    // runs calibration held out
	Hits         []int     `json:"calibration,omitempty"` // held-out runs complete in the top 10, per weight of memWeights
	Weights      []float64 `json:"weights,omitempty"`     // memWeights
}

// BuildMemory makes the memory of past tasks from runs: their tool sets, each with the terms of
// its tasks (Tokenize, as queries are analyzed) that at least opt.MinRuns distinct task texts
// share; nil when no run has a task with a kept term. Trusted runs count as they are, identical
// task texts of a tool set merged, at most opt.PerSet distinct texts a set, newest first. A
// reported run counts once per reporter and tool set, and only for a set that opt.MinReporters
// reporters gave: one reporter, however often it reports, makes no word point at a tool. A term
// of reported tasks counts once per reporter, and only when opt.MinReporters reporters used it.
// The fusion weight is left 0: FitMemory calibrates it.
func BuildMemory(runs []PastRun, opt MemoryOptions) (*graphs.Memory, MemoryStats) {
	return newMemCorpus(runs).build(opt.orDefaults(), nil)
}

// memCorpus is runs read once for any number of memories of them: each distinct task text
// tokenized once into term ids, each run's tool set identified once. FitMemory builds six
// memories of the same runs (all of them, then each fold's rest) from one corpus, and a build
// state keeps it (MemoryCorpus), so that an update reads only its new runs.
type memCorpus struct {
	noTask int
	vocab  []string  // term id → term, in the order first seen
	texts  [][]int32 // text id → its term ids in order, repeats kept
	uniq   [][]int32 // text id → its distinct term ids
	sets   []corpusSet
	next   int // the index of the next run: runs are numbered in the order they came

	// What Add needs to place a new run, made on its first call (index).
	hashes   []uint64 // text id → textHash of the text
	firstRun []int32  // text id → the first run that asked it
	strs     []string // text id − held → the text: the texts added since the corpus was decoded
	held     int      // the texts read back (DecodeMemoryCorpus), whose strings it does not hold
	reporter []string // reporter id → its name
	byHash   map[uint64][]int32
	termID   map[string]int32
	repID    map[string]int32
	setID    map[string]int32 // setKey → index in sets
	unsorted bool             // sets were added since they were last in setKey order
}

// corpusSet is one tool set (failed runs apart) of a corpus; sets are in setKey order, the
// order of their documents.
type corpusSet struct {
	skills []int
	failed bool
	tasks  []corpusTask // its distinct trusted task texts, in the order first seen
	rep    []int32      // per reporter, in the order first seen: the text id of its newest task
	repBy  []int32      // per reporter, its id in the corpus
}

// corpusTask is one distinct task text of a set and the (ascending) indices of the runs that
// asked it.
type corpusTask struct {
	text int32
	runs []int32
}

func newMemCorpus(runs []PastRun) *memCorpus {
	c := &memCorpus{}
	for i, r := range runs {
		c.add(r, i, nil) // texts are compared as strings: no run is read back
	}
	c.sort()
	return c
}

// textHash is FNV-1a of a (trimmed) task text: a text's key in the corpus, checked against the
// text itself before two runs are taken to share it.
func textHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// index makes the maps add places runs with.
func (c *memCorpus) index() {
	if c.termID != nil {
		return
	}
	c.termID = make(map[string]int32, len(c.vocab))
	for i, t := range c.vocab {
		c.termID[t] = int32(i)
	}
	c.byHash = make(map[uint64][]int32, len(c.hashes))
	for i, h := range c.hashes {
		c.byHash[h] = append(c.byHash[h], int32(i))
	}
	c.repID = make(map[string]int32, len(c.reporter))
	for i, r := range c.reporter {
		c.repID[r] = int32(i)
	}
	c.setID = make(map[string]int32, len(c.sets))
	for i := range c.sets {
		c.setID[setKey(c.sets[i].skills, c.sets[i].failed)] = int32(i)
	}
}

// add reads run r, the run numbered at (at least every earlier run's number). taskOf returns
// the task text of an earlier run, to tell two texts of one hash apart when the corpus holds no
// texts (it was decoded); with the texts at hand it is not called.
func (c *memCorpus) add(r PastRun, at int, taskOf func(run int) (string, error)) error {
	c.index()
	c.next = max(c.next, at+1)
	task := strings.TrimSpace(r.Task)
	if task == "" || len(r.Skills) == 0 {
		c.noTask++
		return nil
	}
	h := textHash(task)
	t := int32(-1)
	for _, id := range c.byHash[h] {
		var same bool
		if int(id) >= c.held {
			same = c.strs[int(id)-c.held] == task
		} else if taskOf != nil {
			old, err := taskOf(int(c.firstRun[id]))
			if err != nil {
				return err
			}
			same = strings.TrimSpace(old) == task
		}
		if same {
			t = id
			break
		}
	}
	if t < 0 {
		t = int32(len(c.texts))
		c.byHash[h] = append(c.byHash[h], t)
		c.hashes, c.firstRun = append(c.hashes, h), append(c.firstRun, int32(at))
		c.strs = append(c.strs, task)
		var terms, uniq []int32
		seen := map[int32]bool{}
		eachTerm(task, func(w string) {
			tid, ok := c.termID[w]
			if !ok {
				tid = int32(len(c.vocab))
				c.termID[w] = tid
				c.vocab = append(c.vocab, w)
			}
			terms = append(terms, tid)
			if !seen[tid] {
				seen[tid] = true
				uniq = append(uniq, tid)
			}
		})
		c.texts, c.uniq = append(c.texts, terms), append(c.uniq, uniq)
	}
	ids := slices.Clone(r.Skills)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	key := setKey(ids, r.Failed)
	k, ok := c.setID[key]
	if !ok {
		k = int32(len(c.sets))
		c.setID[key] = k
		c.sets = append(c.sets, corpusSet{skills: ids, failed: r.Failed})
		c.unsorted = true
	}
	s := &c.sets[k]
	if r.Reporter != "" {
		who, ok := c.repID[r.Reporter]
		if !ok {
			who = int32(len(c.reporter))
			c.repID[r.Reporter] = who
			c.reporter = append(c.reporter, r.Reporter)
		}
		if x := slices.Index(s.repBy, who); x >= 0 {
			s.rep[x] = t
		} else {
			s.rep, s.repBy = append(s.rep, t), append(s.repBy, who)
		}
		return nil
	}
	for x := range s.tasks {
		if s.tasks[x].text == t {
			s.tasks[x].runs = append(s.tasks[x].runs, int32(at))
			return nil
		}
	}
	s.tasks = append(s.tasks, corpusTask{text: t, runs: []int32{int32(at)}})
	return nil
}

// sort puts the sets in setKey order, the order of the memory's documents.
func (c *memCorpus) sort() {
	if !c.unsorted {
		return
	}
	keys := make([]string, len(c.sets))
	order := make([]int, len(c.sets))
	for i := range c.sets {
		keys[i], order[i] = setKey(c.sets[i].skills, c.sets[i].failed), i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sets := make([]corpusSet, len(c.sets))
	for i, k := range order {
		sets[i] = c.sets[k]
		if c.setID != nil {
			c.setID[keys[k]] = int32(i)
		}
	}
	c.sets, c.unsorted = sets, false
}

// build makes the memory of the corpus's runs but those out marks (trusted runs only; nil: none
// left out), as BuildMemory says.
func (c *memCorpus) build(opt MemoryOptions, out []bool) (*graphs.Memory, MemoryStats) {
	m, st, _ := c.buildAll(opt, out, false)
	return m, st
}

// keptTask is a task text a document keeps: the text, its runs and the newest of them.
type keptTask struct {
	text int32
	runs int
	last int32
}

// memDocBuild is a tool set's document as build chose it: the tasks it keeps (newest first),
// whether its reporters are admitted, and its runs.
type memDocBuild struct {
	set   int32
	tasks []keptTask
	rep   bool
	runs  int
}

// memBuild is what a build of every run decided, which a fold's memory (fold) starts from: the
// documents, how many of them keep each text, the privacy rule's tallies, and each document's
// term frequencies (tfOff[d]..tfOff[d+1] in tfTerm and tfVal; an empty span for a document left
// out of the memory).
type memBuild struct {
	docs     []memDocBuild
	docOf    []int32 // per set, its document, -1 for none
	refs     []int32 // per text, the documents that keep it
	texts    []int32 // per term, the kept texts that hold it
	reps     []int32 // per term, the admitted reporters that used it
	keep     []bool
	tfOff    []int32
	tfTerm   []int32
	tfVal    []float32
	memDocOf []int32 // per document, its index in the memory, -1 when left out
}

// choose is set s's document without the runs out marks: its kept tasks, whether its
// reporters are admitted, its runs and the runs the cap left out; ok false when no run of the
// set is left. cand is scratch space.
func (c *memCorpus) choose(opt MemoryOptions, i int, out []bool, cand []keptTask) (d memDocBuild, capped, unagreed int, ok bool, _ []keptTask) {
	s := &c.sets[i]
	cand = cand[:0]
	for _, t := range s.tasks {
		n, last := len(t.runs), int32(-1)
		for k := len(t.runs) - 1; k >= 0; k-- {
			if out != nil && out[t.runs[k]] {
				n--
			} else if last < 0 {
				last = t.runs[k]
			}
		}
		if n > 0 {
			cand = append(cand, keptTask{t.text, n, last})
		}
	}
	if len(cand) == 0 && len(s.rep) == 0 {
		return d, 0, 0, false, cand // no run of the set is in this memory
	}
	slices.SortFunc(cand, func(a, b keptTask) int { return int(b.last - a.last) })
	d.set = int32(i)
	for j, t := range cand {
		if j >= opt.PerSet {
			capped += t.runs
			continue
		}
		d.tasks = append(d.tasks, t)
		d.runs += t.runs
	}
	if len(s.rep) >= opt.MinReporters {
		d.rep = true
		d.runs += len(s.rep)
	} else {
		unagreed += len(s.rep)
	}
	return d, capped, unagreed, true, cand
}

// docTF appends the term frequencies of document d under keep to terms and vals (tf is
// scratch space, zero on return).
func (c *memCorpus) docTF(d *memDocBuild, keep []bool, tf []float32, terms []int32, vals []float32) ([]int32, []float32) {
	from := len(terms)
	add := func(term int32) {
		if tf[term] == 0 {
			terms = append(terms, term)
		}
		tf[term]++
	}
	for _, t := range d.tasks {
		for _, term := range c.texts[t.text] {
			if keep[term] {
				add(term)
			}
		}
	}
	if d.rep {
		for _, t := range c.sets[d.set].rep {
			for _, term := range c.uniq[t] {
				if keep[term] {
					add(term) // a reporter's task counts a term once
				}
			}
		}
	}
	for _, term := range terms[from:] {
		vals = append(vals, tf[term])
		tf[term] = 0
	}
	return terms, vals
}

// buildAll is build, and with record what fold starts from.
func (c *memCorpus) buildAll(opt MemoryOptions, out []bool, record bool) (*graphs.Memory, MemoryStats, *memBuild) {
	c.sort() // documents in setKey order
	st := MemoryStats{NoTask: c.noTask}
	mb := &memBuild{docOf: make([]int32, len(c.sets)), refs: make([]int32, len(c.texts))}
	var cand []keptTask
	for i := range c.sets {
		mb.docOf[i] = -1
		d, capped, unagreed, ok, scratch := c.choose(opt, i, out, cand)
		cand = scratch
		st.Capped += capped
		st.Unagreed += unagreed
		if !ok {
			continue
		}
		for _, t := range d.tasks {
			mb.refs[t.text]++
		}
		mb.docOf[i] = int32(len(mb.docs))
		mb.docs = append(mb.docs, d)
	}

	// The privacy rule's tally: distinct trusted texts and distinct reporters per term.
	nt := len(c.vocab)
	mb.texts = make([]int32, nt)
	seen := make([]bool, nt) // the term is in a kept text or an admitted reporter's task
	for t, refs := range mb.refs {
		if refs > 0 {
			for _, term := range c.uniq[t] {
				mb.texts[term]++
				seen[term] = true
			}
		}
	}
	mb.reps = make([]int32, nt)
	type termRep struct{ term, rep int32 }
	var repSeen map[termRep]bool
	for _, d := range mb.docs {
		if !d.rep {
			continue
		}
		if repSeen == nil {
			repSeen = map[termRep]bool{}
		}
		s := &c.sets[d.set]
		for k, t := range s.rep {
			for _, term := range c.uniq[t] {
				seen[term] = true
				if key := (termRep{term, s.repBy[k]}); !repSeen[key] {
					repSeen[key] = true
					mb.reps[term]++
				}
			}
		}
	}
	mb.keep = make([]bool, nt)
	all := 0
	for term := range nt {
		if !seen[term] {
			continue
		}
		all++
		if mb.kept(opt, term) {
			mb.keep[term] = true
			st.TermsKept++
		}
	}
	st.TermsDropped = all - st.TermsKept

	tf := make([]float32, nt)
	mb.tfOff = make([]int32, 1, len(mb.docs)+1)
	for k := range mb.docs {
		mb.tfTerm, mb.tfVal = c.docTF(&mb.docs[k], mb.keep, tf, mb.tfTerm, mb.tfVal)
		mb.tfOff = append(mb.tfOff, int32(len(mb.tfTerm)))
	}
	m := mb.assemble(c, nt, func(k int) ([]int32, []float32) {
		return mb.tfTerm[mb.tfOff[k]:mb.tfOff[k+1]], mb.tfVal[mb.tfOff[k]:mb.tfOff[k+1]]
	})
	if m == nil {
		return nil, st, nil
	}
	st.Runs, st.Sets = m.Runs, len(m.Docs)
	if !record {
		mb = nil
	}
	return m, st, mb
}

// kept reports whether term passes the privacy rule under the tallies of mb.
func (mb *memBuild) kept(opt MemoryOptions, term int) bool {
	n := int(mb.texts[term])
	if r := int(mb.reps[term]); r >= opt.MinReporters {
		n += r
	}
	return n >= opt.MinRuns
}

// assemble makes the memory of mb's documents, document k with the term frequencies tfOf(k)
// (none: left out), and records which document became which; nil without any.
func (mb *memBuild) assemble(c *memCorpus, nt int, tfOf func(k int) ([]int32, []float32)) *graphs.Memory {
	m := &graphs.Memory{K1: 1.2, B: 0.75, Depth: memDepth}
	// Each term's postings in one block of one array, counted first: appending to a slice per
	// term was most of the cost of a fold's memory.
	df := make([]int32, nt+1)
	for k := range mb.docs {
		if terms, _ := tfOf(k); len(terms) > 0 && mb.docs[k].runs > 0 {
			for _, term := range terms {
				df[term+1]++
			}
		}
	}
	for term := range nt {
		df[term+1] += df[term]
	}
	all := make([]graphs.Posting, df[nt])
	post := make([][]graphs.Posting, nt)
	for term := range nt {
		post[term] = all[df[term]:df[term]:df[term+1]]
	}
	var total float64
	mb.memDocOf = make([]int32, len(mb.docs))
	for k := range mb.docs {
		mb.memDocOf[k] = -1
		d := &mb.docs[k]
		terms, vals := tfOf(k)
		if len(terms) == 0 || d.runs == 0 {
			continue
		}
		doc := uint32(len(m.Docs))
		mb.memDocOf[k] = int32(doc)
		var length float32 // a sum of whole numbers: exact, in any order
		for x, term := range terms {
			post[term] = append(post[term], graphs.Posting{Doc: doc, TF: vals[x]})
			length += vals[x]
		}
		set := &c.sets[d.set]
		ids := make([]uint32, len(set.skills))
		for i, id := range set.skills {
			ids[i] = uint32(id)
		}
		m.Docs = append(m.Docs, graphs.MemoryDoc{Len: length, Runs: d.runs, Failed: set.failed, Skills: ids})
		m.Runs += d.runs
		total += float64(length)
	}
	if len(m.Docs) == 0 {
		return nil
	}
	m.AvgDL = float32(total / float64(len(m.Docs)))
	var terms []int32
	for term := range nt {
		if len(post[term]) > 0 {
			terms = append(terms, int32(term))
		}
	}
	slices.SortFunc(terms, func(a, b int32) int { return strings.Compare(c.vocab[a], c.vocab[b]) })
	m.Terms = make([]string, len(terms))
	m.Postings = make([][]graphs.Posting, len(terms))
	for i, term := range terms {
		m.Terms[i], m.Postings[i] = c.vocab[term], post[term] // documents were added in ascending order
	}
	return m
}

// fold makes the memory build(opt, out) makes, from main, the record of the build of every
// run, when out marks only trusted runs of the sets affected: only their documents, and those
// holding a term whose privacy rule the left-out runs change, are made again. A term that the
// rule would admit only without the left-out runs (the cap letting an older task in) sends it
// back to build.
func (c *memCorpus) fold(opt MemoryOptions, main *memBuild, out []bool, affected []int32) (*graphs.Memory, bool) {
	nt := len(c.vocab)
	docs := slices.Clone(main.docs)
	docOf := main.docOf
	changed := map[int32]bool{}
	refs := map[int32]int32{} // texts whose count of keeping documents changed: the count now
	ref := func(t int32) int32 {
		if r, ok := refs[t]; ok {
			return r
		}
		return main.refs[t]
	}
	var cand []keptTask
	for _, i := range affected {
		k := docOf[i]
		if k < 0 {
			return nil, false // not a set with a left-out run: it had a document
		}
		for _, t := range main.docs[k].tasks {
			refs[t.text] = ref(t.text) - 1
		}
		d, _, _, ok, scratch := c.choose(opt, int(i), out, cand)
		cand = scratch
		if !ok {
			d = memDocBuild{set: i}
		}
		for _, t := range d.tasks {
			refs[t.text] = ref(t.text) + 1
		}
		docs[k] = d
		changed[k] = true
	}
	// The tallies of the terms of texts kept or dropped anew.
	texts := map[int32]int32{}
	for t, r := range refs {
		was, now := main.refs[t] > 0, r > 0
		if was == now {
			continue
		}
		for _, term := range c.uniq[t] {
			n, ok := texts[term]
			if !ok {
				n = main.texts[term]
			}
			if now {
				n++
			} else {
				n--
			}
			texts[term] = n
		}
	}
	keep := main.keep
	var flipped []int32
	for term, n := range texts {
		m := int(n)
		if r := int(main.reps[term]); r >= opt.MinReporters {
			m += r
		}
		if now := m >= opt.MinRuns; now != main.keep[term] {
			if now {
				return nil, false // a term kept only without the left-out runs: build it whole
			}
			flipped = append(flipped, term)
		}
	}
	if len(flipped) > 0 {
		keep = slices.Clone(main.keep)
		for _, term := range flipped {
			keep[term] = false
		}
	}
	// The documents that hold a term no longer kept: every document of its postings.
	if len(flipped) > 0 {
		drop := make([]bool, nt)
		for _, term := range flipped {
			drop[term] = true
		}
		for k := range main.docs {
			if changed[int32(k)] {
				continue
			}
			for _, term := range main.tfTerm[main.tfOff[k]:main.tfOff[k+1]] {
				if drop[term] {
					changed[int32(k)] = true
					break
				}
			}
		}
	}
	tf := make([]float32, nt)
	type span struct {
		terms []int32
		vals  []float32
	}
	again := make(map[int32]span, len(changed))
	for k := range changed {
		terms, vals := c.docTF(&docs[k], keep, tf, nil, nil)
		again[k] = span{terms, vals}
	}
	mb := &memBuild{docs: docs}
	return mb.assemble(c, nt, func(k int) ([]int32, []float32) {
		if s, ok := again[int32(k)]; ok {
			return s.terms, s.vals
		}
		return main.tfTerm[main.tfOff[k]:main.tfOff[k+1]], main.tfVal[main.tfOff[k]:main.tfOff[k+1]]
	}), true
}

// setKey identifies a tool set (ascending ids) and whether its runs failed.
func setKey(ids []int, failed bool) string {
	var b strings.Builder
	if failed {
		b.WriteByte('!')
	}
	for _, id := range ids {
		b.WriteString(errtext.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// recallIndex is a memory ready to answer queries.
type recallIndex struct {
	weight float64
	depth  int
	terms  []string  // ascending
	off    []int32   // postings of term t: [off[t], off[t+1])
	doc    []int32   // per posting: its document
	imp    []float64 // per posting: BM25's term-frequency factor times the term's idf
	runs   []int32   // per document
	failed []bool    // per document
	soff   []int32   // skills of document d: skills[soff[d]:soff[d+1]]
	skills []int32
}

// memoryOf reads g's memory of past tasks, nil without one: each posting's BM25 term-frequency
// factor times its term's idf computed once, as bm25Impacts does for the lexicon.
func memoryOf(g *graphs.Graph) *recallIndex {
	if !g.HasMemory() || g.NumMemoryDocs() == 0 {
		return nil
	}
	k1f, bf, avgf, weight, depth, _ := g.MemoryParams()
	nd, nt := g.NumMemoryDocs(), g.NumMemoryTerms()
	r := &recallIndex{weight: float64(weight), depth: depth, terms: make([]string, nt),
		off: make([]int32, nt+1), runs: make([]int32, nd), failed: make([]bool, nd), soff: make([]int32, nd+1)}
	norm := make([]float64, nd)
	k1, b, avg := float64(k1f), float64(bf), max(float64(avgf), 1e-9)
	for d := range nd {
		l, runs, failed := g.MemoryDoc(d)
		norm[d] = k1 * (1 - b + b*float64(l)/avg)
		r.runs[d], r.failed[d] = int32(runs), failed
		ids := g.MemorySkills(d)
		for i := 0; i+4 <= len(ids); i += 4 {
			r.skills = append(r.skills, int32(binary.LittleEndian.Uint32(ids[i:])))
		}
		r.soff[d+1] = int32(len(r.skills))
	}
	for t := range nt {
		r.terms[t] = g.MemoryTerm(t)
		ps := g.MemoryPostingBytes(t)
		r.off[t+1] = r.off[t] + int32(len(ps)/8)
		df := float64(len(ps) / 8)
		idf := math.Log(1 + (float64(nd)-df+0.5)/(df+0.5))
		for i := 0; i+8 <= len(ps); i += 8 {
			d, tf := int32(binary.LittleEndian.Uint32(ps[i:])), float64(math.Float32frombits(binary.LittleEndian.Uint32(ps[i+4:])))
			r.doc = append(r.doc, d)
			r.imp = append(r.imp, idf*tf*(k1+1)/(tf+norm[d]))
		}
	}
	return r
}

// find returns the index of term s, or -1.
func (r *recallIndex) find(s string) int {
	i := search(len(r.terms), func(i int) bool { return r.terms[i] >= s })
	if i < len(r.terms) && r.terms[i] == s {
		return i
	}
	return -1
}

// vote is a skill's standing in the memory's answer to a query.
type vote struct {
	id    int
	score float64 // Σ ±s_d/s_best over the voting documents that hold it (− for failed ones)
	runs  int     // runs of the successful voting documents that hold it
	terms uint64  // the query's tokens (by place, the first 64) those documents matched
}

// recall returns the votes of the depth nearest documents for the query's distinct terms toks,
// in no particular order, with the largest |score|; nil when no document shares a term.
func (r *recallIndex) recall(sc *scratch, toks []queryToken) ([]vote, float64) {
	if r == nil {
		return nil, 0
	}
	nd := len(r.runs)
	if len(sc.memScore) < nd {
		sc.memScore, sc.memHit = make([]float64, nd), make([]uint64, nd)
	}
	// Term at a time, without a branch per posting: every document's score is read back by one
	// pass over the score array (offerPositive), cheaper than keeping a list of the touched
	// ones, whose test of each posting the processor cannot predict.
	scores, hits := sc.memScore[:nd], sc.memHit[:nd]
	any := false
	for qi, tk := range toks {
		t := r.find(tk.text)
		if t < 0 {
			continue
		}
		any = true
		var bit uint64
		if qi < 64 {
			bit = 1 << qi
		}
		docs, imps := r.doc[r.off[t]:r.off[t+1]], r.imp[r.off[t]:r.off[t+1]]
		imps = imps[:len(docs)]
		for i, d := range docs {
			scores[d] += imps[i]
			hits[d] |= bit
		}
	}
	if !any {
		return nil, 0
	}
	top := topCandidates{k: r.depth, h: sc.memTop[:0]}
	top.offerPositive(scores)
	docs := top.sorted()
	sc.memTop = docs
	best := docs[0].score
	var votes []vote
	at := &sc.voted
	at.reset(len(sc.bm25))
	for _, c := range docs {
		w := c.score / best
		if r.failed[c.id] {
			w = -w
		}
		hit := sc.memHit[c.id]
		for _, s := range r.skills[r.soff[c.id]:r.soff[c.id+1]] {
			k, ok := at.get(int(s))
			if !ok {
				k = len(votes)
				at.set(int(s), k)
				votes = append(votes, vote{id: int(s)})
			}
			v := &votes[k]
			v.score += w
			if !r.failed[c.id] {
				v.runs += int(r.runs[c.id])
				v.terms |= hit
			}
		}
	}
	clear(scores)
	clear(hits)
	var norm float64
	for _, v := range votes {
		norm = max(norm, math.Abs(v.score))
	}
	return votes, norm
}

// Recall is the memory's evidence for a result: how many past runs whose tasks shared the
// query's words used it, and those words.
type Recall struct {
	Runs  int      `json:"runs"`
	Terms []string `json:"terms"`
}

// Evidence says in a few words what the memory recalled, in the words every door prints, e.g.
// "recalled: 14 past runs (stock, news)": the runs and the query's terms (as the index keeps
// them, stemmed) their tasks shared.
func (rc *Recall) Evidence() string {
	s := "recalled: " + errtext.Itoa(rc.Runs) + " past run"
	if rc.Runs != 1 {
		s += "s"
	}
	for i, t := range rc.Terms {
		if i == 0 {
			s += " ("
		} else {
			s += ", "
		}
		s += t
	}
	if len(rc.Terms) > 0 {
		s += ")"
	}
	return s
}

// recallOf is the evidence of v among toks, the query's distinct terms.
func recallOf(v vote, toks []queryToken) *Recall {
	rc := &Recall{Runs: v.runs}
	for i := range min(len(toks), 64) {
		if v.terms&(1<<i) != 0 {
			rc.Terms = append(rc.Terms, toks[i].text)
		}
	}
	return rc
}

// memVotes are the memory's votes for one query, with the fusion weight they carry.
type memVotes struct {
	list   []vote
	weight float64
	norm   float64 // the largest |score|: a vote counts score/norm ∈ [−1, 1] times weight
}

// memoryVotes recalls the query's nearest past tasks; nil where the memory is silent: none in
// the artifact, a weight of 0, req.NoMemory, or no past task sharing a term. Skills the filter
// (allow) drops get no vote. The slots sc.voted map a skill to its vote until the next call.
func (e *Engine) memoryVotes(sc *scratch, req *Request, toks []queryToken, allow []uint64) *memVotes {
	if e.mem == nil || e.mem.weight == 0 || req.NoMemory {
		return nil
	}
	list, norm := e.mem.recall(sc, toks)
	if norm == 0 {
		return nil
	}
	for i := range list {
		if !kept(allow, list[i].id) {
			list[i].score = 0
		}
	}
	return &memVotes{list: list, weight: e.mem.weight, norm: norm}
}

// of is the memory's addition to skill v's score: weight·score/norm, 0 without a vote.
func (m *memVotes) of(sc *scratch, v int) float64 {
	if m == nil {
		return 0
	}
	k, ok := sc.voted.get(v)
	if !ok {
		return 0
	}
	return m.weight * m.list[k].score / m.norm
}

// evidence is Result.Recalled of skill v: set when the memory raised it.
func (m *memVotes) evidence(sc *scratch, v int, toks []queryToken) *Recall {
	if m == nil {
		return nil
	}
	k, ok := sc.voted.get(v)
	if !ok || m.list[k].score <= 0 || m.list[k].runs == 0 {
		return nil
	}
	return recallOf(m.list[k], toks)
}

// scale is the factor that reports the answer ranked (best first) relative to its best, as
// scores are without the memory: its additions can take the best above 1.
func (m *memVotes) scale(ranked []candidate) float64 {
	if m == nil || len(ranked) == 0 || ranked[0].score <= 1 {
		return 1
	}
	return 1 / ranked[0].score
}

// voters are the votes, none for nil.
func (m *memVotes) voters() []vote {
	if m == nil {
		return nil
	}
	return m.list
}

// FitMemory makes the memory of past tasks of the corpus's runs (BuildMemory) for g, an artifact
// without one, and calibrates its fusion weight on held-out runs, as the edges are calibrated on
// probes: at most memHeldOut trusted successful runs with a task, in memFolds folds, are each
// asked of g's engine and of a memory of the runs outside their fold, and the weight of
// memWeights under which the most of them find their whole tool set in the first 10 wins (the
// smallest on a tie, so memory speaks only where it helps). Where past tasks recur in other words
// that is a high weight; where they do not, 0: the memory is kept, and silent. Reported runs are
// never held out, so a reporter cannot steer the weight. taskOf returns the task text of run i
// (as MemoryCorpus.Add numbered it), which a held-out run is asked with.
//
// g is art without a memory, decoded: the graph whose answers the memory's votes are added to.
func FitMemory(art *graphs.Artifact, g *graphs.Graph, corpus *MemoryCorpus, taskOf func(run int) (string, error), opt MemoryOptions) (*graphs.Memory, MemoryStats, error) {
	opt = opt.orDefaults()
	c := &corpus.c
	c.sort()
	m, st, main := c.buildAll(opt, nil, true)
	if m == nil {
		return nil, st, nil
	}
	// The candidates to hold out, in the order of the runs: the trusted runs of successful sets.
	var cand []int32
	setOf := map[int32]int{} // held-out run → its set
	for i := range c.sets {
		if c.sets[i].failed {
			continue
		}
		for _, t := range c.sets[i].tasks {
			cand = append(cand, t.runs...)
		}
	}
	slices.Sort(cand)
	step := max(1, (len(cand)+memHeldOut-1)/memHeldOut)
	var held []int32
	for k := 0; k < len(cand); k += step {
		held = append(held, cand[k])
		setOf[cand[k]] = -1
	}
	for i := range c.sets {
		if c.sets[i].failed {
			continue
		}
		for _, t := range c.sets[i].tasks {
			for _, r := range t.runs {
				if _, ok := setOf[r]; ok {
					setOf[r] = i
				}
			}
		}
	}
	runs := make([]PastRun, len(held))
	for k, r := range held {
		task, err := taskOf(int(r))
		if err != nil {
			return nil, st, err
		}
		runs[k] = PastRun{Task: task, Skills: c.sets[setOf[r]].skills}
	}
	// The folds' memories, two at a time: each is as large as the memory of every run.
	idx := make([]*recallIndex, memFolds)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, min(runtime.GOMAXPROCS(0), memFolds)))
	for f := range memFolds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out := make([]bool, c.next)
			var affected []int32
			for k := f; k < len(held); k += memFolds {
				out[held[k]] = true
				affected = append(affected, int32(setOf[held[k]]))
			}
			slices.Sort(affected)
			fm, ok := c.fold(opt, main, out, slices.Compact(affected))
			if !ok {
				fm, _ = c.build(opt, out)
			}
			if fm != nil {
				idx[f] = recallIndexOf(fm)
			}
		}()
	}
	wg.Wait()
	type ask struct {
		idx *recallIndex
		run int
	}
	var asks []ask
	for f := range memFolds {
		if idx[f] == nil {
			continue
		}
		for k := f; k < len(held); k += memFolds {
			asks = append(asks, ask{idx[f], k})
		}
	}
	e := New(g)
	// The held-out runs are asked on every core: each worker adds up hits of its own, and the
	// sums do not depend on which worker asked what.
	workers := min(runtime.GOMAXPROCS(0), max(1, len(asks)/32))
	tallies := make([][]int, workers)
	for w := range workers {
		tallies[w] = make([]int, len(memWeights))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(asks); k += workers {
				e.calibrate(asks[k].idx, runs[asks[k].run], tallies[w])
			}
		}()
	}
	wg.Wait()
	hits := make([]int, len(memWeights))
	for _, t := range tallies {
		for w := range hits {
			hits[w] += t[w]
		}
	}
	best := 0
	for w := range hits {
		if hits[w] > hits[best] {
			best = w
		}
	}
	m.Weight = float32(memWeights[best])
	st.Weight, st.HeldOut, st.Hits, st.Weights = memWeights[best], len(held), hits, memWeights
	return m, st, nil
}

// recallIndexOf is memoryOf of an artifact whose memory is m, without encoding one: the same
// values, from the same float32 fields the artifact would hold.
func recallIndexOf(m *graphs.Memory) *recallIndex {
	nd, nt := len(m.Docs), len(m.Terms)
	if nd == 0 {
		return nil
	}
	r := &recallIndex{weight: float64(m.Weight), depth: m.Depth, terms: m.Terms,
		off: make([]int32, nt+1), runs: make([]int32, nd), failed: make([]bool, nd), soff: make([]int32, nd+1)}
	norm := make([]float64, nd)
	k1, b, avg := float64(m.K1), float64(m.B), max(float64(m.AvgDL), 1e-9)
	total := 0
	for d := range m.Docs {
		total += len(m.Docs[d].Skills)
	}
	r.skills = make([]int32, 0, total)
	for d, doc := range m.Docs {
		norm[d] = k1 * (1 - b + b*float64(doc.Len)/avg)
		r.runs[d], r.failed[d] = int32(doc.Runs), doc.Failed
		for _, id := range doc.Skills {
			r.skills = append(r.skills, int32(id))
		}
		r.soff[d+1] = int32(len(r.skills))
	}
	np := 0
	for _, ps := range m.Postings {
		np += len(ps)
	}
	r.doc, r.imp = make([]int32, 0, np), make([]float64, 0, np)
	for t, ps := range m.Postings {
		r.off[t+1] = r.off[t] + int32(len(ps))
		df := float64(len(ps))
		idf := math.Log(1 + (float64(nd)-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.TF)
			r.doc = append(r.doc, int32(p.Doc))
			r.imp = append(r.imp, idf*tf*(k1+1)/(tf+norm[p.Doc]))
		}
	}
	return r
}

// calibrate adds to hits[w], for each weight w of memWeights, whether run r's whole tool set is
// in the first 10 of the engine's answer to its task fused with idx's votes at that weight.
func (e *Engine) calibrate(idx *recallIndex, r PastRun, hits []int) {
	req := Request{Query: r.Task, K: memCalibK, NoMemory: true}
	if req.normalize() != nil {
		return
	}
	resp, err := e.rank(req, true)
	if err != nil {
		return
	}
	sc := e.getScratch()
	votes, norm := idx.recall(sc, e.analyze(sc, r.Task))
	e.putScratch(sc)
	score := map[int]float64{}
	for _, res := range resp.Results {
		score[res.ID] = res.Score
	}
	for _, v := range votes {
		if _, ok := score[v.id]; !ok {
			score[v.id] = 0
		}
	}
	ids := make([]int, 0, len(score))
	for id := range score {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	gold := map[int]bool{}
	for _, s := range r.Skills {
		gold[s] = true
	}
	vote := map[int]float64{}
	for _, v := range votes {
		vote[v.id] = v.score / norm
	}
	// The first 10 under each weight: better is a total order, so the 10 a bounded heap keeps
	// are the first 10 of the sorted list, whatever order they come in.
	top := topCandidates{k: 10, h: make([]candidate, 0, 10)}
	for w, beta := range memWeights {
		top.h = top.h[:0]
		for _, id := range ids {
			top.offer(candidate{id, score[id] + beta*vote[id]})
		}
		found := 0
		for _, c := range top.h {
			found += b2i(gold[c.id])
		}
		hits[w] += b2i(found == len(gold))
	}
}
