package engine

import (
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/caskg/caskg/graphs"
)

// Building the memory of past tasks from runs (BuildMemory, FitMemory): the code the builder
// runs, apart from what a query reads (memory.go), so that changing it leaves the WebAssembly
// module's code where it was.

// memCorpus is runs read once for any number of memories of them: each distinct task text
// tokenized once into term ids, each run's tool set identified once. FitMemory builds six
// memories of the same runs (all of them, then each fold's rest) from one corpus, and a build
// state keeps it (MemoryCorpus), so that an update reads only its new runs.
type memCorpus struct {
	noTask int
	vocab  []string // term id → term, in the order first seen
	// Text t's term ids in order, repeats kept, are terms[textOff[t]:textOff[t+1]], its
	// distinct ones uniqTerms[uniqOff[t]:uniqOff[t+1]] (text, uniq): offsets into two arrays,
	// not a slice a text, which at 100,000 texts the garbage collector read and a corpus read
	// back made one by one.
	terms, uniqTerms []int32
	textOff, uniqOff []int
	sets             []corpusSet
	next             int // the index of the next run: runs are numbered in the order they came

	// What Add needs to place a new run, made on its first call (index).
	hashes   []uint64         // text id → textHash of the text
	firstRun []int32          // text id → the first run that asked it
	strs     []string         // text id − held → the text: the texts added since the corpus was decoded
	held     int              // the texts read back (DecodeMemoryCorpus), whose strings it does not hold
	reporter []string         // reporter id → its name
	byHash   map[uint64]int32 // textHash → the last text of that hash
	sameHash []int32          // text id → the text before it of its hash, -1 for none
	termID   map[string]int32
	repID    map[string]int32
	setID    map[string]int32 // setKey → index in sets
	unsorted bool             // sets were added since they were last in setKey order
	// keys are the sets' setKeys, by index in sets, once made (nil before): decoding, placing a
	// run and sorting read them, and a corpus read back would otherwise make them thrice.
	keys []string
	// inOrder is how many of the first sets are in setKey order: sort sorts the others and
	// merges them in.
	inOrder int
	// What a corpus read back keeps of its bytes, which AppendBinary copies rather than
	// encoding again: the items of its first vocabHeld terms, reporterHeld reporters and held
	// texts (corpusSet.enc keeps each set's).
	vocabEnc, reporterEnc, textsEnc []byte
	vocabHeld, reporterHeld         int
	// memo is what the last memory of every run (buildAll) decided, which the next one of the
	// same options reuses; nil for none.
	memo *corpusMemo
}

// corpusMemo is what a memory of every run decided beside the term frequencies of each set's
// document (corpusSet.tf): its options and which terms the privacy rule kept. A corpus read
// back holds the memo of the build that wrote it, so that an update's memory counts the terms
// again only of the documents of the sets it added runs to and of those holding a term the
// rule now judges otherwise: a document's term frequencies depend on nothing else.
type corpusMemo struct {
	opt  MemoryOptions // with the defaults filled in
	keep []bool        // by term id: the terms known then, and whether the rule kept each
}

// corpusSet is one tool set (failed runs apart) of a corpus; sets are in setKey order, the
// order of their documents.
type corpusSet struct {
	skills []int
	failed bool
	tasks  []corpusTask // its distinct trusted task texts, in the order first seen
	rep    []int32      // per reporter, in the order first seen: the text id of its newest task
	repBy  []int32      // per reporter, its id in the corpus
	// enc is the set's bytes as the corpus it was read back from held them (AppendBinary's
	// layout), nil for a set made or changed since.
	enc []byte
	// tf is the term frequencies of the set's document in the memory the memo records, when
	// hasTF: none for a set without a document then, or made or changed since.
	tf    tfSpan
	hasTF bool
	// tfEnc is tf's bytes as the corpus it was read back from held them (AppendBinary's
	// layout), nil when tf was counted since or is not the one read.
	tfEnc []byte
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
	c.termID = make(map[string]int32, room(len(c.vocab))) // room for the new runs' terms
	for i, t := range c.vocab {
		c.termID[t] = int32(i)
	}
	// A map of one id per hash and a chain through sameHash, not a slice per hash: a corpus
	// read back at 100,000 texts made as many slices for the few an update's runs look up.
	c.byHash = make(map[uint64]int32, room(len(c.hashes)))
	c.sameHash = make([]int32, len(c.hashes), len(c.hashes)+64)
	for i, h := range c.hashes {
		c.sameHash[i] = c.lastOfHash(h)
		c.byHash[h] = int32(i)
	}
	c.repID = make(map[string]int32, len(c.reporter))
	for i, r := range c.reporter {
		c.repID[r] = int32(i)
	}
	c.setID = make(map[string]int32, room(len(c.sets)))
	for i, k := range c.setKeys() {
		c.setID[k] = int32(i)
	}
}

// lastOfHash is the last text of hash h, -1 for none.
func (c *memCorpus) lastOfHash(h uint64) int32 {
	if id, ok := c.byHash[h]; ok {
		return id
	}
	return -1
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
	for id := c.lastOfHash(h); id >= 0; id = c.sameHash[id] {
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
		t = int32(c.numTexts())
		c.sameHash = append(c.sameHash, c.lastOfHash(h))
		c.byHash[h] = t
		c.hashes, c.firstRun = append(c.hashes, h), append(c.firstRun, int32(at))
		c.strs = append(c.strs, task)
		if len(c.textOff) == 0 {
			c.textOff, c.uniqOff = []int{0}, []int{0}
		}
		seen := map[int32]bool{}
		eachTerm(task, func(w string) {
			tid, ok := c.termID[w]
			if !ok {
				tid = int32(len(c.vocab))
				c.termID[w] = tid
				c.vocab = append(c.vocab, w)
			}
			c.terms = append(c.terms, tid)
			if !seen[tid] {
				seen[tid] = true
				c.uniqTerms = append(c.uniqTerms, tid)
			}
		})
		c.textOff, c.uniqOff = append(c.textOff, len(c.terms)), append(c.uniqOff, len(c.uniqTerms))
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
		c.keys = append(c.keys, key)
		c.unsorted = true
	}
	s := &c.sets[k]
	s.enc, s.tf, s.hasTF, s.tfEnc = nil, tfSpan{}, false, nil // changed below
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

// numTexts is the number of distinct texts.
func (c *memCorpus) numTexts() int { return max(0, len(c.textOff)-1) }

// text is text t's term ids in order, repeats kept.
func (c *memCorpus) text(t int32) []int32 { return c.terms[c.textOff[t]:c.textOff[t+1]] }

// uniq is text t's distinct term ids, in the order first seen.
func (c *memCorpus) uniq(t int32) []int32 { return c.uniqTerms[c.uniqOff[t]:c.uniqOff[t+1]] }

// setKeys are the sets' setKeys, made once (in one allocation) and kept up to date.
func (c *memCorpus) setKeys() []string {
	if len(c.keys) == len(c.sets) {
		return c.keys
	}
	var b []byte
	ends := make([]int, len(c.sets))
	for i := range c.sets {
		b = appendSetKey(b, c.sets[i].skills, c.sets[i].failed)
		ends[i] = len(b)
	}
	all, keys, from := string(b), make([]string, len(c.sets)), 0
	for i, end := range ends {
		keys[i], from = all[from:end], end
	}
	c.keys = keys
	return keys
}

// appendSetKey appends setKey(ids, failed) to b.
func appendSetKey(b []byte, ids []int, failed bool) []byte {
	if failed {
		b = append(b, '!')
	}
	for _, id := range ids {
		b = strconv.AppendUint(b, uint64(id), 10)
		b = append(b, ',')
	}
	return b
}

// sort puts the sets in setKey order, the order of the memory's documents.
func (c *memCorpus) sort() {
	if !c.unsorted {
		return
	}
	keys := c.setKeys()
	// The sets up to inOrder are in order already (a corpus read back, or sorted before sets
	// were added): only the sets added since are sorted, then merged with them.
	tail := make([]int, 0, len(c.sets)-c.inOrder)
	for i := c.inOrder; i < len(c.sets); i++ {
		tail = append(tail, i)
	}
	slices.SortFunc(tail, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	order := make([]int, 0, len(c.sets))
	head := 0
	for _, k := range tail {
		for head < c.inOrder && keys[head] < keys[k] {
			order = append(order, head)
			head++
		}
		order = append(order, k)
	}
	for ; head < c.inOrder; head++ {
		order = append(order, head)
	}
	sets, sorted := make([]corpusSet, len(c.sets)), make([]string, len(c.sets))
	for i, k := range order {
		sets[i], sorted[i] = c.sets[k], keys[k]
		if c.setID != nil && i != k {
			c.setID[keys[k]] = int32(i)
		}
	}
	c.sets, c.keys, c.unsorted, c.inOrder = sets, sorted, false, len(sets)
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
	memDocOf []int32   // per document, its index in the memory, -1 when left out
	lens     []float32 // per document, its length (when in the memory)
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
	if n := max(0, min(len(cand), opt.PerSet)); n > 0 {
		d.tasks = slices.Clone(cand[:n]) // the newest PerSet, in one allocation
	}
	for j, t := range cand {
		if j >= opt.PerSet {
			capped += t.runs
		} else {
			d.runs += t.runs
		}
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
		for _, term := range c.text(t.text) {
			if keep[term] {
				add(term)
			}
		}
	}
	if d.rep {
		for _, t := range c.sets[d.set].rep {
			for _, term := range c.uniq(t) {
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
	mb := &memBuild{docOf: make([]int32, len(c.sets)), refs: make([]int32, c.numTexts())}
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
			for _, term := range c.uniq(int32(t)) {
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
			for _, term := range c.uniq(t) {
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

	// Each document's term frequencies: the memo's where they cannot have changed, else
	// counted (docTF).
	var stale []bool
	memo := out == nil && c.memo != nil && c.memo.opt == opt
	if memo {
		stale = c.staleTexts(mb.keep)
	}
	tf := make([]float32, nt)
	mb.tfOff = make([]int32, 1, len(mb.docs)+1)
	if memo {
		n := 0 // the memo's frequencies, and an eighth more for the documents counted again
		for i := range c.sets {
			n += len(c.sets[i].tf.terms)
		}
		mb.tfTerm, mb.tfVal = make([]int32, 0, n+n/8), make([]float32, 0, n+n/8)
	}
	var same []bool // per set: its document's frequencies are the memo's
	if out == nil {
		same = make([]bool, len(c.sets))
	}
	for k := range mb.docs {
		d := &mb.docs[k]
		if s := &c.sets[d.set]; memo && s.hasTF && !d.holds(c, stale) {
			mb.tfTerm, mb.tfVal = append(mb.tfTerm, s.tf.terms...), append(mb.tfVal, s.tf.vals...)
			same[d.set] = true
		} else {
			mb.tfTerm, mb.tfVal = c.docTF(d, mb.keep, tf, mb.tfTerm, mb.tfVal)
		}
		mb.tfOff = append(mb.tfOff, int32(len(mb.tfTerm)))
	}
	if out == nil {
		c.remember(opt, mb, same)
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

// staleTexts marks the texts holding a term whose privacy rule keep judges otherwise than the
// memo did; nil when it judges every term alike. A term the memo did not know is in texts
// added since, which only sets made or changed since hold.
func (c *memCorpus) staleTexts(keep []bool) []bool {
	var flipped []bool
	for term, was := range c.memo.keep {
		if was != keep[term] {
			if flipped == nil {
				flipped = make([]bool, len(keep))
			}
			flipped[term] = true
		}
	}
	if flipped == nil {
		return nil
	}
	stale := make([]bool, c.numTexts())
	for t := range stale {
		for _, term := range c.uniq(int32(t)) {
			if flipped[term] {
				stale[t] = true
				break
			}
		}
	}
	return stale
}

// holds reports whether document d counts a text stale marks (nil: none).
func (d *memDocBuild) holds(c *memCorpus, stale []bool) bool {
	if stale == nil {
		return false
	}
	for _, t := range d.tasks {
		if stale[t.text] {
			return true
		}
	}
	if d.rep {
		for _, t := range c.sets[d.set].rep {
			if stale[t] {
				return true
			}
		}
	}
	return false
}

// remember makes mb, a memory of every run under opt, the corpus's memo; same marks the sets
// whose frequencies it copied from the memo before, whose bytes stay.
func (c *memCorpus) remember(opt MemoryOptions, mb *memBuild, same []bool) {
	c.memo = &corpusMemo{opt: opt, keep: mb.keep}
	for i := range c.sets {
		s := &c.sets[i]
		s.tf, s.hasTF = tfSpan{}, false
		if !same[i] {
			s.tfEnc = nil
		}
		if k := mb.docOf[i]; k >= 0 {
			from, to := mb.tfOff[k], mb.tfOff[k+1]
			s.tf, s.hasTF = tfSpan{mb.tfTerm[from:to:to], mb.tfVal[from:to:to]}, true
		}
	}
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
	mb.memDocOf, mb.lens = make([]int32, len(mb.docs)), make([]float32, len(mb.docs))
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
		mb.lens[k] = length
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
	docs, again, ok := c.foldDocs(opt, main, out, affected)
	if !ok {
		return nil, false
	}
	mb := &memBuild{docs: docs}
	return mb.assemble(c, len(c.vocab), func(k int) ([]int32, []float32) {
		if s, ok := again[int32(k)]; ok {
			return s.terms, s.vals
		}
		return main.tfTerm[main.tfOff[k]:main.tfOff[k+1]], main.tfVal[main.tfOff[k]:main.tfOff[k+1]]
	}), true
}

// tfSpan is a document's term frequencies: its kept terms and how often each occurs.
type tfSpan struct {
	terms []int32
	vals  []float32
}

// foldDocs is the documents of a fold's memory (fold) and the term frequencies of those made
// again; ok false when the fold must be built whole.
func (c *memCorpus) foldDocs(opt MemoryOptions, main *memBuild, out []bool, affected []int32) ([]memDocBuild, map[int32]tfSpan, bool) {
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
			return nil, nil, false // not a set with a left-out run: it had a document
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
		for _, term := range c.uniq(t) {
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
				return nil, nil, false // a term kept only without the left-out runs: build it whole
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
	again := make(map[int32]tfSpan, len(changed))
	for k := range changed {
		terms, vals := c.docTF(&docs[k], keep, tf, nil, nil)
		again[k] = tfSpan{terms, vals}
	}
	return docs, again, true
}

// foldIndex is recallIndexOf(fold(…)) for the query terms need (by term id) alone: the same
// documents, lengths and idf, and the postings of those terms, which are all a fold's held-out
// runs look up. Most of a memory's postings belong to terms none of them asks, and a fold
// lays them out no more. ok false when the fold must be built whole.
func (c *memCorpus) foldIndex(opt MemoryOptions, main *memBuild, mainMem *graphs.Memory, out []bool, affected []int32, need []int32) (*recallIndex, bool) {
	docs, again, ok := c.foldDocs(opt, main, out, affected)
	if !ok {
		return nil, false
	}
	isAgain := make([]bool, len(docs))
	for k := range again {
		isAgain[k] = true
	}
	// The fold's documents, in order: main's where not made again.
	foldOf := make([]int32, len(docs)) // document k → its id in the fold, -1 when left out
	lens := make([]float32, 0, len(docs))
	runs := make([]int32, 0, len(docs))
	failed := make([]bool, 0, len(docs))
	soff := make([]int32, 1, len(docs)+1)
	skills := make([]int32, 0, 4*len(docs))
	var total float64
	for k := range docs {
		foldOf[k] = -1
		d := &docs[k]
		var length float32
		if isAgain[k] {
			s := again[int32(k)]
			if len(s.terms) == 0 || d.runs == 0 {
				continue
			}
			for _, v := range s.vals {
				length += v
			}
		} else {
			if main.memDocOf[k] < 0 {
				continue
			}
			length = main.lens[k]
		}
		foldOf[k] = int32(len(lens))
		lens = append(lens, length)
		runs = append(runs, int32(d.runs))
		set := &c.sets[d.set]
		failed = append(failed, set.failed)
		for _, id := range set.skills {
			skills = append(skills, int32(id))
		}
		soff = append(soff, int32(len(skills)))
		total += float64(length)
	}
	nd := len(lens)
	if nd == 0 {
		return nil, true
	}
	avgdl := float32(total / float64(nd))
	r := &recallIndex{depth: memDepth, runs: runs, failed: failed, soff: soff, skills: skills, off: []int32{0}}
	k1, b, avg := float64(float32(1.2)), float64(float32(0.75)), max(float64(avgdl), 1e-9)
	// main's documents by their id in main's memory: their id in the fold, -1 for one made
	// again (its postings are the fold's own)
	foldOfMain := make([]int32, len(mainMem.Docs))
	for k, d := range main.memDocOf {
		if d >= 0 {
			foldOfMain[d] = foldOf[k]
			if isAgain[k] {
				foldOfMain[d] = -1
			}
		}
	}
	// BM25's length normalization of each of the fold's documents
	norms := make([]float64, nd)
	for d, l := range lens {
		norms[d] = k1 * (1 - b + b*float64(l)/avg)
	}
	terms := slices.Clone(need)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	slices.SortFunc(terms, func(a, b int32) int { return strings.Compare(c.vocab[a], c.vocab[b]) })
	type posting struct {
		doc int32
		tf  float32
	}
	// The postings of the asked terms in the documents made again.
	asked := make([]bool, len(c.vocab))
	for _, term := range terms {
		asked[term] = true
	}
	extraOf := map[int32][]posting{}
	for k, s := range again {
		if foldOf[k] < 0 {
			continue
		}
		for x, t := range s.terms {
			if asked[t] {
				extraOf[t] = append(extraOf[t], posting{foldOf[k], s.vals[x]})
			}
		}
	}
	mainOf := make([]int, len(terms)) // each asked term's postings in main's memory, -1 for none
	size := 0
	for i, term := range terms {
		t, found := slices.BinarySearch(mainMem.Terms, c.vocab[term])
		mainOf[i] = -1
		if found {
			mainOf[i] = t
			size += len(mainMem.Postings[t])
		}
		size += len(extraOf[term])
	}
	r.doc, r.imp = make([]int32, 0, size), make([]float64, 0, size)
	var ps []posting
	for i, term := range terms {
		ps = ps[:0]
		// main's postings of the term where main's document stays, merged with those of the
		// documents made again (both in document order: ids map to the fold's in order)
		extra := extraOf[term]
		slices.SortFunc(extra, func(a, b posting) int { return int(a.doc - b.doc) })
		x := 0
		if t := mainOf[i]; t >= 0 {
			for _, p := range mainMem.Postings[t] {
				d := foldOfMain[p.Doc]
				if d < 0 {
					continue
				}
				for x < len(extra) && extra[x].doc < d {
					ps = append(ps, extra[x])
					x++
				}
				ps = append(ps, posting{d, p.TF})
			}
		}
		ps = append(ps, extra[x:]...)
		if len(ps) == 0 {
			continue
		}
		r.terms = append(r.terms, c.vocab[term])
		df := float64(len(ps))
		idf := math.Log(1 + (float64(nd)-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			r.doc = append(r.doc, p.doc)
			r.imp = append(r.imp, idf*tf*(k1+1)/(tf+norms[p.doc]))
		}
		r.off = append(r.off, int32(len(r.doc)))
	}
	return r.withBounds(), true
}

// preparedMemory is the memory of every run of a corpus and the calibration's votes, made by
// Prepare for FitMemory.
type preparedMemory struct {
	opt  MemoryOptions
	m    *graphs.Memory
	st   MemoryStats
	main *memBuild
	plan *calPlan // nil when not made
}

// Prepare makes ahead of FitMemory (with the same options) the memory of every run and, for a
// library of skills skills, the half of its calibration that reads the memory alone: the
// held-out runs (their task texts from taskOf, as FitMemory's) and each one's votes from the
// memory of the runs outside its fold. FitMemory then starts from them: they need the corpus
// and not the graph, so a builder makes them beside other work. The corpus must not change in
// between (Add drops them).
func (mc *MemoryCorpus) Prepare(opt MemoryOptions, skills int, taskOf func(run int) (string, error)) {
	opt = opt.orDefaults()
	mc.c.sort()
	m, st, main := mc.c.buildAll(opt, nil, true)
	p := &preparedMemory{opt: opt, m: m, st: st, main: main}
	if m != nil && taskOf != nil {
		// An error of taskOf is FitMemory's to report: it makes the plan again.
		p.plan, _ = mc.c.calibration(opt, main, m, skills, taskOf)
	}
	mc.prep = p
}

// calPlan is the half of FitMemory's calibration that needs the corpus and not the graph: the
// held-out runs and, for each, the votes of the memory of the runs outside its fold (recall).
// A builder makes it with the memory of every run (MemoryCorpus.Prepare), beside the graph.
type calPlan struct {
	skills int // the library's size, which the votes' scratch was made for
	runs   []PastRun
	asked  []bool    // per held-out run: its fold has a memory to ask (else the run is not counted)
	votes  [][]vote  // per held-out run, recall's answer of its fold's memory
	norm   []float64 // per held-out run, the largest |score| of its votes
}

// calibration chooses the held-out runs of the corpus's memory m (main its record, opt its
// options) and recalls each from its fold's memory, on every core, for a library of skills
// skills.
func (c *memCorpus) calibration(opt MemoryOptions, main *memBuild, m *graphs.Memory, skills int, taskOf func(run int) (string, error)) (*calPlan, error) {
	// The candidates to hold out, in the order of the runs: the trusted runs of successful sets.
	setOf := make([]int32, c.next) // a candidate run → 1 + its set, 0 for a run not a candidate
	cand := 0
	for i := range c.sets {
		if c.sets[i].failed {
			continue
		}
		for _, t := range c.sets[i].tasks {
			cand += len(t.runs)
			for _, r := range t.runs {
				setOf[r] = int32(i) + 1
			}
		}
	}
	step := max(1, (cand+memHeldOut-1)/memHeldOut)
	var held []int32
	k := 0 // the candidates passed
	for r, s := range setOf {
		if s > 0 {
			if k%step == 0 {
				held = append(held, int32(r))
			}
			k++
		}
	}
	for r := range setOf {
		setOf[r]-- // → its set
	}
	p := &calPlan{skills: skills, runs: make([]PastRun, len(held)), asked: make([]bool, len(held)),
		votes: make([][]vote, len(held)), norm: make([]float64, len(held))}
	for k, r := range held {
		task, err := taskOf(int(r))
		if err != nil {
			return nil, err
		}
		p.runs[k] = PastRun{Task: task, Skills: c.sets[setOf[r]].skills}
	}
	// The terms each fold's held-out runs look up, as a query analyzes them (queryTerms): a
	// fold's index holds those alone (memCorpus.foldIndex).
	toks := make([][]queryToken, len(held))
	need := make([][]int32, memFolds)
	{
		want := map[string][]int{}
		for k := range held {
			toks[k] = queryTerms(p.runs[k].Task)
			for _, tk := range toks[k] {
				if f := k % memFolds; !slices.Contains(want[tk.text], f) {
					want[tk.text] = append(want[tk.text], f)
				}
			}
		}
		for id, w := range c.vocab {
			for _, f := range want[w] {
				need[f] = append(need[f], int32(id))
			}
		}
	}
	// The folds' indexes and the held-out runs' recalls, on every core, from one queue: the
	// folds first, then the recalls fold by fold, each waiting for its fold's index, so that no
	// core waits for the last fold before it recalls.
	idx := make([]*recallIndex, memFolds)
	ready := make([]chan struct{}, memFolds)
	for f := range ready {
		ready[f] = make(chan struct{})
	}
	fold := func(f int) *recallIndex {
		out := make([]bool, c.next)
		var affected []int32
		for k := f; k < len(held); k += memFolds {
			out[held[k]] = true
			affected = append(affected, int32(setOf[held[k]]))
		}
		slices.Sort(affected)
		fi, ok := c.foldIndex(opt, main, m, out, slices.Compact(affected), need[f])
		if !ok {
			if fm, _ := c.build(opt, out); fm != nil {
				fi = recallIndexOf(fm)
			}
		}
		return fi
	}
	type ask struct{ fold, run int }
	asks := make([]ask, 0, len(held))
	for f := range memFolds {
		for k := f; k < len(held); k += memFolds {
			asks = append(asks, ask{f, k})
		}
	}
	work := make(chan int, memFolds+len(asks))
	for i := range memFolds + len(asks) {
		work <- i
	}
	close(work)
	workers := min(runtime.GOMAXPROCS(0), memFolds+len(asks))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc *scratch
			for i := range work {
				if i < memFolds {
					idx[i] = fold(i)
					close(ready[i])
					continue
				}
				a := asks[i-memFolds]
				<-ready[a.fold]
				if idx[a.fold] == nil {
					continue
				}
				if sc == nil {
					sc = recallScratch(skills)
				}
				p.asked[a.run] = true
				p.votes[a.run], p.norm[a.run] = idx[a.fold].recall(sc, toks[a.run])
			}
		}()
	}
	wg.Wait()
	return p, nil
}

// queryTerms are the distinct terms of text in the order first seen, as a query analyzes it
// (Engine.analyze) and as recall reads them: by their text, whatever the library's vocabulary.
func queryTerms(text string) []queryToken {
	var out []queryToken
	var at map[string]int // past maxScannedUnknown terms, each one's place in out
	eachTerm(text, func(t string) {
		if at != nil {
			if i, ok := at[t]; ok {
				out[i].count++
				return
			}
			at[t] = len(out)
		} else {
			for i := range out {
				if out[i].text == t {
					out[i].count++
					return
				}
			}
			if len(out) == maxScannedUnknown {
				at = make(map[string]int, 2*maxScannedUnknown)
				for i := range out {
					at[out[i].text] = i
				}
				at[t] = len(out)
			}
		}
		out = append(out, queryToken{text: t, vocab: -1, count: 1})
	})
	return out
}

// recallScratch is a scratch for recall alone, of a library of n skills: recall makes the
// memory's arrays it reads on its first use.
func recallScratch(n int) *scratch {
	return &scratch{bm25: make([]float64, n)}
}
