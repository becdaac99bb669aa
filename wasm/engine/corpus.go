package engine

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/caskg/caskg/graphs/errtext"
)

// MemoryCorpus is the runs a memory of past tasks is made from, read once: each distinct task
// text as term ids, each run's tool set. A build keeps it in its state (AppendBinary), so that
// an update adds its new runs (Add) rather than reading every run's text again; FitMemory makes
// the memory from it. A corpus read back holds no task text, only its terms and a hash of it.
type MemoryCorpus struct {
	c    memCorpus
	prep *preparedMemory // Prepare's, until FitMemory takes it
}

// NewMemoryCorpus returns an empty corpus.
func NewMemoryCorpus() *MemoryCorpus {
	return &MemoryCorpus{}
}

// Add reads run r, numbered run (the numbers increase with every call: the order of the runs,
// which decides the newest of a tool set's tasks). taskOf returns the task text of an earlier
// run: a corpus read back (DecodeMemoryCorpus) asks it for the text of a run whose task has the
// hash of r's, so that two texts are one only when they are equal.
func (mc *MemoryCorpus) Add(r PastRun, run int, taskOf func(run int) (string, error)) error {
	if run < mc.c.next {
		return errors.New("engine: memory corpus: runs out of order")
	}
	mc.prep = nil
	return mc.c.add(r, run, taskOf)
}

// Runs is the number after the last run added: a run added next is numbered at least that.
func (mc *MemoryCorpus) Runs() int { return mc.c.next }

// corpusVersion starts a corpus's bytes: a corpus of another layout is not read. Version 2
// added the memo.
const corpusVersion = 2

// AppendBinary appends the corpus's bytes to b. The layout, in uvarints (u) and little-endian
// 64-bit hashes (h); a list is its length followed by its items:
//
//	u version, u next run, u runs without a task
//	vocab: list of (u length, bytes)
//	reporters: list of (u length, bytes)
//	texts: list of (h hash, u first run, list of u term)
//	sets: list of (list of u skill, u failed, tasks: list of (u text, list of u run − previous
//	      run), reporters: list of (u text, u reporter))
//	memo: u 0 for none, or u 1, u MinRuns, u MinReporters, u PerSet, u terms, a bit per term
//	      (kept, the lowest bit first, in whole bytes), then per set u 0 for no term
//	      frequencies, or u 1 + the number of terms, then the terms and then their
//	      frequencies, each a little-endian 32-bit word (a frequency as float32 bits)
//
// What a corpus read back (DecodeMemoryCorpus) held is copied as it was: its terms, reporters
// and texts, and the bytes of each set no run was added to since.
func (mc *MemoryCorpus) AppendBinary(b []byte) []byte {
	c := &mc.c
	c.sort()
	size := len(c.vocabEnc) + len(c.reporterEnc) + len(c.textsEnc) + 64
	for i := range c.sets {
		s := &c.sets[i]
		size += len(s.enc) + len(s.tfEnc) + 8*len(s.tf.terms) // the set and its memo
	}
	b = slices.Grow(b, size+size/8)
	u := func(x int) { b = binary.AppendUvarint(b, uint64(x)) }
	strs := func(xs []string, held int, enc []byte) {
		u(len(xs))
		b = append(b, enc...)
		for _, s := range xs[held:] {
			u(len(s))
			b = append(b, s...)
		}
	}
	u(corpusVersion)
	u(c.next)
	u(c.noTask)
	strs(c.vocab, c.vocabHeld, c.vocabEnc)
	strs(c.reporter, c.reporterHeld, c.reporterEnc)
	u(c.numTexts())
	from := 0 // the first text to encode
	if c.textsEnc != nil {
		b, from = append(b, c.textsEnc...), c.held
	}
	for i := from; i < c.numTexts(); i++ {
		terms := c.text(int32(i))
		b = binary.LittleEndian.AppendUint64(b, c.hashes[i])
		u(int(c.firstRun[i]))
		u(len(terms))
		for _, t := range terms {
			u(int(t))
		}
	}
	u(len(c.sets))
	for i := range c.sets {
		s := &c.sets[i]
		if s.enc != nil {
			b = append(b, s.enc...)
			continue
		}
		u(len(s.skills))
		for _, id := range s.skills {
			u(id)
		}
		failed := 0
		if s.failed {
			failed = 1
		}
		u(failed)
		u(len(s.tasks))
		for _, t := range s.tasks {
			u(int(t.text))
			u(len(t.runs))
			prev := int32(-1)
			for _, r := range t.runs {
				u(int(r - prev))
				prev = r
			}
		}
		u(len(s.rep))
		for k := range s.rep {
			u(int(s.rep[k]))
			u(int(s.repBy[k]))
		}
	}
	return c.appendMemo(b)
}

// appendMemo appends the memo as AppendBinary lays it out.
func (c *memCorpus) appendMemo(b []byte) []byte {
	u := func(x int) { b = binary.AppendUvarint(b, uint64(x)) }
	m := c.memo
	if m == nil {
		u(0)
		return b
	}
	u(1)
	u(m.opt.MinRuns)
	u(m.opt.MinReporters)
	u(m.opt.PerSet)
	u(len(m.keep))
	bits := make([]byte, (len(m.keep)+7)/8)
	for term, kept := range m.keep {
		if kept {
			bits[term/8] |= 1 << (term % 8)
		}
	}
	b = append(b, bits...)
	for i := range c.sets {
		s := &c.sets[i]
		switch {
		case s.tfEnc != nil:
			b = append(b, s.tfEnc...)
		case !s.hasTF:
			u(0)
		default:
			u(1 + len(s.tf.terms))
			for _, term := range s.tf.terms {
				b = binary.LittleEndian.AppendUint32(b, uint32(term))
			}
			for _, v := range s.tf.vals {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
	}
	return b
}

// errCorpus is the error of corpus bytes that do not decode: a constant, so that the WebAssembly
// module, which never decodes a corpus, carries no variable initialised for it.
const errCorpus = corpusError("engine: memory corpus: corrupt")

type corpusError string

func (e corpusError) Error() string { return string(e) }

// DecodeMemoryCorpus reads what AppendBinary wrote for a library of skills skills, checking
// every length and id.
func DecodeMemoryCorpus(data []byte, skills int) (*MemoryCorpus, error) {
	r := corpusReader{b: data}
	if v := r.n(math.MaxInt32); r.err == nil && v != corpusVersion {
		return nil, errors.New("engine: memory corpus: another layout (version " + errtext.Itoa(v) + ")")
	}
	mc := &MemoryCorpus{}
	c := &mc.c
	c.next = r.n(math.MaxInt32)
	c.noTask = r.n(math.MaxInt32)
	c.vocab, c.vocabEnc = r.strs()
	c.reporter, c.reporterEnc = r.strs()
	c.vocabHeld, c.reporterHeld = len(c.vocab), len(c.reporter)
	nt := r.count(10)
	textsAt := r.b
	// The tables an update appends to have room for a few more, so that its first run does
	// not copy them whole.
	c.textOff, c.uniqOff = make([]int, 1, room(nt)+1), make([]int, 1, room(nt)+1)
	c.hashes, c.firstRun = make([]uint64, 0, room(nt)), make([]int32, 0, room(nt))
	var seen []int32 // per term: the last text that held it, + 1
	if r.err == nil {
		seen = make([]int32, len(c.vocab))
	}
	// Every text's terms, and then its distinct ones, in the two arrays the offsets point into.
	all, uniq := make([]int32, 0, len(r.b)/2), make([]int32, 0, len(r.b)/2)
	for i := range nt {
		if r.err != nil || len(r.b) < 8 {
			r.err = errCorpus
			break
		}
		c.hashes = append(c.hashes, binary.LittleEndian.Uint64(r.b))
		r.b = r.b[8:]
		c.firstRun = append(c.firstRun, int32(r.n(c.next-1)))
		k := r.count(1)
		from := len(all)
		for range k {
			t := int32(r.n(len(c.vocab) - 1))
			if r.err != nil {
				break
			}
			all = append(all, t)
		}
		// Its distinct terms in the order first seen: a short text is searched for each term
		// (a few compares in a line of cache), a long one marks them in seen.
		if terms := all[from:]; len(terms) <= 32 {
			for x, t := range terms {
				if !slices.Contains(terms[:x], t) {
					uniq = append(uniq, t)
				}
			}
		} else {
			for _, t := range terms {
				if seen[t] != int32(i)+1 {
					seen[t] = int32(i) + 1
					uniq = append(uniq, t)
				}
			}
		}
		c.textOff, c.uniqOff = append(c.textOff, len(all)), append(c.uniqOff, len(uniq))
	}
	c.terms, c.uniqTerms = all, uniq
	c.textsEnc = spanOf(textsAt, r.b)
	ns := r.count(4)
	c.sets = make([]corpusSet, 0, room(ns))
	// The runs of every task, in one array that the tasks slice: a run is in one task, so
	// there are at most c.next of them (a task past that, in a corrupt corpus, has its own).
	runs := make([]int32, 0, c.next)
	for range ns {
		if r.err != nil {
			break
		}
		c.sets = c.sets[:len(c.sets)+1] // made in place: a set is large
		s := &c.sets[len(c.sets)-1]
		at := r.b
		s.skills = make([]int, r.count(1))
		for k := range s.skills {
			s.skills[k] = r.n(skills - 1)
			if k > 0 && s.skills[k] <= s.skills[k-1] && r.err == nil {
				r.err = errCorpus
			}
		}
		s.failed = r.n(1) == 1
		s.tasks = make([]corpusTask, r.count(2))
		for k := range s.tasks {
			t := &s.tasks[k]
			t.text = int32(r.n(c.numTexts() - 1))
			n := r.count(1)
			if len(runs)+n <= cap(runs) {
				t.runs, runs = runs[len(runs):len(runs)+n:len(runs)+n], runs[:len(runs)+n]
			} else {
				t.runs = make([]int32, n)
			}
			prev := -1
			for x := range t.runs {
				prev += r.n(c.next)
				if prev >= c.next && r.err == nil {
					r.err = errCorpus
				}
				t.runs[x] = int32(prev)
			}
		}
		nr := r.count(2)
		s.rep, s.repBy = make([]int32, nr), make([]int32, nr)
		for k := range nr {
			s.rep[k] = int32(r.n(c.numTexts() - 1))
			s.repBy[k] = int32(r.n(len(c.reporter) - 1))
		}
		s.enc = spanOf(at, r.b)
	}
	r.memo(c)
	if r.err == nil && len(r.b) != 0 {
		r.err = errCorpus
	}
	if r.err != nil {
		return nil, r.err
	}
	c.held = c.numTexts()
	keys := c.setKeys()
	for i := 1; i < len(keys); i++ {
		if strings.Compare(keys[i-1], keys[i]) >= 0 {
			return nil, errCorpus // out of order, or a set twice
		}
	}
	c.inOrder = len(c.sets)
	return mc, nil
}

// corpusReader reads a corpus's bytes; after the first error every read returns 0 and err
// stays.
type corpusReader struct {
	b   []byte
	err error
}

// n reads a uvarint of at most limit.
func (r *corpusReader) n(limit int) int {
	if r.err != nil {
		return 0
	}
	x, k := binary.Uvarint(r.b)
	if k <= 0 || limit < 0 || x > uint64(limit) {
		r.err = errCorpus
		return 0
	}
	r.b = r.b[k:]
	return int(x)
}

// memo reads the memo of corpus c, whose terms and sets are read.
func (r *corpusReader) memo(c *memCorpus) {
	if r.n(1) == 0 || r.err != nil {
		return
	}
	m := &corpusMemo{}
	m.opt.MinRuns = r.n(math.MaxInt32)
	m.opt.MinReporters = r.n(math.MaxInt32)
	m.opt.PerSet = r.n(math.MaxInt32)
	nt := r.n(len(c.vocab))
	if r.err != nil || len(r.b) < (nt+7)/8 {
		r.err = errCorpus
		return
	}
	m.keep = make([]bool, nt)
	for term := range m.keep {
		m.keep[term] = r.b[term/8]>>(term%8)&1 != 0
	}
	r.b = r.b[(nt+7)/8:]
	// The sets' term frequencies, in two arrays that they slice.
	terms, vals := make([]int32, 0, len(r.b)/8), make([]float32, 0, len(r.b)/8)
	for i := range c.sets {
		at := r.b
		n := r.n(len(r.b)/8 + 1) // 1 + its terms, eight bytes each
		if n == 0 || r.err != nil {
			continue
		}
		n--
		if len(r.b) < 8*n {
			r.err = errCorpus
			return
		}
		from := len(terms)
		for x := range n {
			term := binary.LittleEndian.Uint32(r.b[4*x:])
			v := math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*(n+x):]))
			if term >= uint32(nt) || !(v >= 1) {
				r.err = errCorpus // a term the memo does not know, or no count
				return
			}
			terms, vals = append(terms, int32(term)), append(vals, v)
		}
		r.b = r.b[8*n:]
		s := &c.sets[i]
		s.tf, s.hasTF = tfSpan{terms[from:len(terms):len(terms)], vals[from:len(vals):len(vals)]}, true
		s.tfEnc = spanOf(at, r.b)
	}
	if r.err == nil {
		c.memo = m
	}
}

// count reads the length of a list whose items take at least size bytes each, so that a corrupt
// length cannot make a large allocation.
func (r *corpusReader) count(size int) int {
	return r.n(len(r.b) / size)
}

// strs reads a list of strings, and returns the bytes of its items beside them.
func (r *corpusReader) strs() ([]string, []byte) {
	k := r.count(1)
	at := r.b
	// The items' bytes, then one string of them all that the items slice: one allocation
	// rather than one an item.
	ends := make([]int, 0, k)
	var text []byte
	for range k {
		l := r.n(math.MaxInt32)
		if r.err == nil && l > len(r.b) {
			r.err = errCorpus
		}
		if r.err != nil {
			return nil, nil
		}
		text = append(text, r.b[:l]...)
		ends = append(ends, len(text))
		r.b = r.b[l:]
	}
	all, from := string(text), 0
	out := make([]string, len(ends), room(k))
	for i, end := range ends {
		out[i], from = all[from:end], end
	}
	return out, spanOf(at, r.b)
}

// room is the capacity of a table of n items read back, which an update appends to: an
// eighth more.
func room(n int) int { return n + n/8 + 16 }

// spanOf is the bytes read from at until rest, at's tail: at[:len(at)-len(rest)], capped.
func spanOf(at, rest []byte) []byte {
	n := len(at) - len(rest)
	return at[:n:n]
}
