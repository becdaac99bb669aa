package builder

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sort"
)

// What a build keeps for a later Update besides its inputs, in two binary tables of the State
// (gob would spend more time on their millions of small values than the update saves):
//
//   - Features: every skill's features and the library's IDF (extractFeatures), which depend on
//     the library alone;
//   - Pairs: per source, every pair the build scored that an update may need — the targets its
//     channels chose before the Cap cut and every candidate — with its values on the scoring
//     channels other than the runs' (which depend on the library alone), and the probe
//     answers of the frontier pairs with their substitute.
//
// The runs' channel, the association, the relation type, the calibration and the publication
// are computed again: they read the runs, whose prior (traceStats.fitPrior) moves with every
// new run.
//
// Layout, little-endian; n is a uvarint, f a float64's bits (8 bytes); a list is its length
// plus one (0 for a nil list) followed by its items:
//
//	features: strings: n, n lengths, the bytes of the strings one after another
//	          idf: n, n × (string n, f) in term order
//	          skills: n, per skill: role n, text vector, object vector, inputs, outputs,
//	                  deps list of n, mentions list of n
//	          vector: list of (term string n, id n, f); slot: key string n, tokens list of
//	                  string n, flags n (1 declared, 2 optional, 4 bare), sense vector
//	pairs:    channels: n, n × (length n, name bytes)
//	          entries n, answered entries n (the totals over the rows)
//	          rows: n (the skills), per source: n entries, per entry in increasing target
//	                order: target − previous target − 1 (n), flags n (1 chosen, 2 answered),
//	                one f per channel, and when answered: substitute n, 3 × (flags n
//	                (1 usable, 2 abstain), f) for removal, substitution, reorder

// errCache is the error of a table that does not decode; DecodeState's checksum makes it
// unlikely, and an update refuses such a state.
var errCache = errors.New("corrupt cache table")

type writer struct{ b []byte }

func (w *writer) n(x int)     { w.b = binary.AppendUvarint(w.b, uint64(x)) }
func (w *writer) f(x float64) { w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(x)) }
func (w *writer) list(l int, isNil bool) {
	if isNil {
		w.n(0)
	} else {
		w.n(l + 1)
	}
}

// reader reads what a writer wrote; after the first error every read returns 0 and err stays.
type reader struct {
	b   []byte
	err error
}

func (r *reader) n() int {
	if r.err != nil {
		return 0
	}
	x, k := binary.Uvarint(r.b)
	if k <= 0 || x > math.MaxInt32 {
		r.err = errCache
		return 0
	}
	r.b = r.b[k:]
	return int(x)
}

// below reads a number less than limit.
func (r *reader) below(limit int) int {
	x := r.n()
	if x >= limit {
		r.err = errCache
		return 0
	}
	return x
}

func (r *reader) f() float64 {
	if r.err != nil || len(r.b) < 8 {
		r.err = errCache
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

// count reads the length of something whose items take at least size bytes each, so that a
// corrupt length cannot make a large allocation.
func (r *reader) count(size int) int {
	x := r.n()
	if x > len(r.b)/size {
		r.err = errCache
		return 0
	}
	return x
}

// list reads a list's length; nil reports a nil list.
func (r *reader) list(size int) (l int, isNil bool) {
	x := r.n()
	if x == 0 {
		return 0, true
	}
	if x-1 > len(r.b)/size {
		r.err = errCache
		return 0, true
	}
	return x - 1, false
}

// strings reads a string table into one string and slices it, so that decoding allocates
// once for all of them.
// readList reads a list of elements of at least size bytes each, each with elem; a nil list
// (written for a nil slice) stays nil.
func readList[T any](r *reader, size int, elem func() T) []T {
	l, isNil := r.list(size)
	if isNil {
		return nil
	}
	xs := make([]T, l)
	for k := range xs {
		xs[k] = elem()
	}
	return xs
}

func (r *reader) strings() []string {
	k := r.count(1)
	lens := make([]int, k)
	total := 0
	for i := range lens {
		lens[i] = r.n()
		total += lens[i]
	}
	if r.err != nil || total > len(r.b) {
		r.err = errCache
		return nil
	}
	all := string(r.b[:total])
	r.b = r.b[total:]
	out := make([]string, k)
	for i, l := range lens {
		out[i], all = all[:l], all[l:]
	}
	return out
}

// encodeFeatures writes the features of every skill and the library's IDF.
func encodeFeatures(fs []features, idf map[string]float64) []byte {
	index := map[string]int{}
	var table []string
	var w writer
	str := func(s string) {
		k, ok := index[s]
		if !ok {
			k = len(table)
			index[s] = k
			table = append(table, s)
		}
		w.n(k)
	}
	vector := func(v sparse) {
		w.list(len(v), v == nil)
		for _, e := range v {
			str(e.term)
			w.n(int(e.id))
			w.f(e.w)
		}
	}
	ints := func(xs []int) {
		w.list(len(xs), xs == nil)
		for _, x := range xs {
			w.n(x)
		}
	}
	slots := func(xs []slot) {
		w.list(len(xs), xs == nil)
		for _, x := range xs {
			str(x.key)
			w.list(len(x.tokens), x.tokens == nil)
			for _, t := range x.tokens {
				str(t)
			}
			flags := 0
			for bit, on := range []bool{x.declared, x.optional, x.bare} {
				if on {
					flags |= 1 << bit
				}
			}
			w.n(flags)
			vector(x.sense)
		}
	}
	terms := make([]string, 0, len(idf))
	for t := range idf {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	w.n(len(terms))
	for _, t := range terms {
		str(t)
		w.f(idf[t])
	}
	w.n(len(fs))
	for i := range fs {
		f := &fs[i]
		w.n(int(f.role))
		vector(f.text)
		vector(f.object)
		slots(f.inputs)
		slots(f.outputs)
		ints(f.deps)
		ints(f.mentions)
	}
	body := w.b
	w = writer{}
	w.n(len(table))
	for _, s := range table {
		w.n(len(s))
	}
	for _, s := range table {
		w.b = append(w.b, s...)
	}
	return append(w.b, body...)
}

// decodeFeatures reads what encodeFeatures wrote for a library of n skills.
func decodeFeatures(data []byte, n int) ([]features, map[string]float64, error) {
	r := &reader{b: data}
	table := r.strings()
	str := func() string {
		if k := r.below(len(table)); r.err == nil {
			return table[k]
		}
		return ""
	}
	vector := func() sparse {
		return readList(r, 3, func() termWeight { return termWeight{term: str(), id: int32(r.n()), w: r.f()} })
	}
	ints := func() []int { return readList(r, 1, func() int { return r.below(n) }) }
	slots := func() []slot {
		return readList(r, 3, func() slot {
			x := slot{key: str(), tokens: readList(r, 1, str)}
			flags := r.n()
			x.declared, x.optional, x.bare = flags&1 != 0, flags&2 != 0, flags&4 != 0
			x.sense = vector()
			return x
		})
	}
	terms := r.count(9)
	idf := make(map[string]float64, terms)
	for range terms {
		t := str()
		idf[t] = r.f()
	}
	if r.n() != n {
		r.err = errCache
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	fs := make([]features, n)
	for i := range fs {
		f := &fs[i]
		f.role = skillRole(r.below(len(roleNames)))
		f.text = vector()
		f.object = vector()
		f.inputs = slots()
		f.outputs = slots()
		f.deps = ints()
		f.mentions = ints()
		if r.err != nil {
			return nil, nil, r.err
		}
	}
	if len(r.b) != 0 {
		return nil, nil, errCache
	}
	return fs, idf, nil
}

// pairCache is the decoded Pairs table of a State: per source, in increasing target order,
// the pairs the earlier build scored with their values on the channels (the scoring channels
// but the runs'), whether the source's channels chose the target before the Cap cut, and the
// probe answers of the frontier pairs.
type pairCache struct {
	channels []string  // in the order of the build's signals
	start    []int32   // the entries of source i are start[i] to start[i+1]
	target   []int32   // by entry
	chosen   []bool    // by entry
	vals     []float64 // len(channels) by entry
	answer   []int32   // by entry: an index into answers, or -1
	answers  []pairAnswers
}

// pairAnswers are a frontier pair's three probe answers (removal, substitution, reorder) and
// the substitute of its substitution probe.
type pairAnswers struct {
	sub     int32
	usable  uint8 // bit k: answer k is usable (a failed answer is asked again)
	abstain uint8 // bit k: answer k abstains
	e       [3]float64
}

// find returns the entry of the pair (i, j), -1 when the earlier build did not score it.
func (c *pairCache) find(i, j int) int {
	lo, hi := int(c.start[i]), int(c.start[i+1])
	t := int32(j)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.target[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < int(c.start[i+1]) && c.target[lo] == t {
		return lo
	}
	return -1
}

// scoredChannels are the names of the channels whose values the Pairs table keeps: the
// signals with a score of their own, but the runs'.
func scoredChannels(signals []signal) []string {
	var out []string
	for _, s := range signals {
		if s.Score != nil && s.Name != chanTraces {
			out = append(out, s.Name)
		}
	}
	return out
}

// encodePairs writes the Pairs table of a build: the targets its channels chose before the Cap
// cut (chosen, with their values chosenVals, len(channels) a target, per source), its
// candidates and the answers of its frontier.
func encodePairs(n int, channels []string, chosen [][]int32, chosenVals [][]float64, cands []edgeCandidate,
	answers []recordedAnswers) []byte {
	var w writer
	at := make([]int, len(channels)) // each channel's place in phis
	for c, name := range channels {
		at[c] = channelIndex(name)
	}
	w.n(len(channels))
	for _, c := range channels {
		w.n(len(c))
		w.b = append(w.b, c...)
	}
	ans := make([]int32, len(cands))
	for k := range ans {
		ans[k] = -1
	}
	for k, a := range answers {
		ans[a.cand] = int32(k)
	}
	// The candidates of each source, then merged with its chosen targets.
	first, order := bySource(n, cands)
	type ent struct {
		target int32
		cand   int32 // -1: a chosen target only
		at     int32 // its place in chosen[i], -1: not chosen
	}
	var row, merged []ent
	head := w
	w = writer{b: make([]byte, 0, (len(cands)+len(cands)/4)*(3+8*len(channels))+len(answers)*36)}
	entries, answered := 0, 0
	w.n(n)
	for i := range n {
		row = row[:0]
		for _, k := range order[first[i]:first[i+1]] {
			row = append(row, ent{int32(cands[k].Target), k, -1})
		}
		slices.SortFunc(row, func(x, y ent) int { return int(x.target - y.target) })
		// Merge with the chosen targets, also in increasing order.
		merged = merged[:0]
		a, js := 0, chosen[i]
		for x := 0; x < len(row) || a < len(js); {
			switch {
			case a == len(js) || x < len(row) && row[x].target < js[a]:
				merged = append(merged, row[x])
				x++
			case x == len(row) || js[a] < row[x].target:
				merged = append(merged, ent{js[a], -1, int32(a)})
				a++
			default:
				e := row[x]
				e.at = int32(a)
				merged = append(merged, e)
				x++
				a++
			}
		}
		w.n(len(merged))
		entries += len(merged)
		prev := int32(-1)
		for _, e := range merged {
			w.n(int(e.target - prev - 1))
			prev = e.target
			flags, an := 0, int32(-1)
			if e.at >= 0 {
				flags |= 1
			}
			if e.cand >= 0 {
				an = ans[e.cand]
			}
			if an >= 0 {
				flags |= 2
				answered++
			}
			w.n(flags)
			if e.cand >= 0 {
				phi := &cands[e.cand].Phi
				for _, x := range at {
					w.f(phi.v[x])
				}
			} else {
				for _, v := range chosenVals[i][int(e.at)*len(channels) : int(e.at+1)*len(channels)] {
					w.f(v)
				}
			}
			if an >= 0 {
				p := &answers[an]
				w.n(int(p.sub))
				for k := range 3 {
					w.n(int(p.usable>>k&1 | (p.abstain>>k&1)<<1))
					w.f(p.e[k])
				}
			}
		}
	}
	head.n(entries)
	head.n(answered)
	return append(head.b, w.b...)
}

// decodePairs reads what encodePairs wrote for a library of n skills.
func decodePairs(data []byte, n int) (*pairCache, error) {
	r := &reader{b: data}
	c := &pairCache{}
	for range r.count(1) {
		l := r.count(1)
		if r.err != nil {
			break
		}
		c.channels = append(c.channels, string(r.b[:l]))
		r.b = r.b[l:]
	}
	k := len(c.channels)
	entries := r.count(2 + 8*k)
	answered := r.count(26)
	if r.n() != n || answered > entries {
		r.err = errCache
	}
	if r.err != nil {
		return nil, r.err
	}
	c.start = make([]int32, n+1)
	c.target, c.chosen, c.answer = make([]int32, 0, entries), make([]bool, 0, entries), make([]int32, 0, entries)
	c.vals, c.answers = make([]float64, 0, k*entries), make([]pairAnswers, 0, answered)
	for i := range n {
		m := r.count(2 + 8*k)
		target := int32(-1)
		for range m {
			target += int32(r.n()) + 1
			if target >= int32(n) || target < 0 {
				r.err = errCache
			}
			flags := r.n()
			if r.err != nil {
				return nil, r.err
			}
			c.target = append(c.target, target)
			c.chosen = append(c.chosen, flags&1 != 0)
			for range k {
				c.vals = append(c.vals, r.f())
			}
			if flags&2 == 0 {
				c.answer = append(c.answer, -1)
				continue
			}
			c.answer = append(c.answer, int32(len(c.answers)))
			a := pairAnswers{sub: int32(r.below(n))}
			for x := range 3 {
				fl := r.below(4)
				a.usable |= uint8(fl&1) << x
				a.abstain |= uint8(fl>>1&1) << x
				a.e[x] = r.f()
			}
			c.answers = append(c.answers, a)
		}
		c.start[i+1] = int32(len(c.target))
	}
	if r.err == nil && (len(r.b) != 0 || len(c.target) != entries || len(c.answers) != answered) {
		r.err = errCache
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// recordedAnswers are the answers a build got for its frontier candidate cand.
type recordedAnswers struct {
	cand int32
	pairAnswers
}

// encodeTally writes a runTally of a library of n skills:
//
//	traces n, sorted n (0 or 1), unknown n, per skill: count n, neighbours n, per neighbour
//	j in the order first seen: j n, and when the skill is below j: co n, before n (the skill
//	first), before n (j first); others: list of run − previous run n
func encodeTally(tl *runTally, n int) []byte {
	var w writer
	w.n(tl.traces)
	sorted := 0
	if tl.sorted {
		sorted = 1
	}
	w.n(sorted)
	w.n(tl.unknown)
	for i := range n {
		w.n(tl.count[i])
		js := tl.neighbors[i]
		w.n(len(js))
		for _, j := range js {
			w.n(j)
			if i < j {
				e := tl.co.get(i, j)
				w.n(int(e.co))
				w.n(int(e.ahead))
				w.n(int(e.behind))
			}
		}
	}
	w.n(len(tl.others))
	prev := int32(-1)
	for _, r := range tl.others {
		w.n(int(r - prev))
		prev = r
	}
	return w.b
}

// decodeTally reads what encodeTally wrote for a library of n skills whose runs number runs.
func decodeTally(data []byte, n, runs int) (*runTally, error) {
	r := &reader{b: data}
	tl := &runTally{traces: r.n(), sorted: r.below(2) == 1, unknown: r.n()}
	tl.count, tl.neighbors = make(map[int]int, n), make(map[int][]int, n)
	tl.co = newCoTable(n)
	rows := tl.co.rows
	// Row i is decoded after every row below it, which added to it, in increasing order, the
	// mirror of each pair they listed with i; its own pairs with a higher skill come after
	// them in the order listed, and are sorted once the row is read.
	listed := make([]int32, n) // listed[j] == i+1: row i listed j
	for i := range n {
		if c := r.n(); c > 0 {
			tl.count[i] = c
		}
		k := r.count(1)
		if k == 0 || r.err != nil {
			continue
		}
		js := make([]int, k)
		lower := len(rows[i]) // the mirrors, from the rows below
		below := 0
		for x := range js {
			j := r.below(n)
			js[x] = j
			if r.err != nil {
				break
			}
			if listed[j] == int32(i+1) {
				r.err = errCache // listed twice
				break
			}
			listed[j] = int32(i + 1)
			switch {
			case i < j:
				co, ij, ji := r.n(), r.n(), r.n()
				if co == 0 || co > math.MaxInt32 || ij > math.MaxInt32 || ji > math.MaxInt32 {
					r.err = errCache
					break
				}
				rows[i] = append(rows[i], coUse{int32(j), int32(co), int32(ij), int32(ji)})
				rows[j] = append(rows[j], coUse{int32(i), int32(co), int32(ji), int32(ij)})
			case i == j:
				r.err = errCache
			default:
				if _, ok := search(rows[i][:lower], int32(j)); !ok {
					r.err = errCache // a pair is listed by its lower skill first
				}
				below++
			}
		}
		if r.err != nil {
			break
		}
		if below != lower {
			r.err = errCache // a pair a lower skill listed that this one does not
			break
		}
		slices.SortFunc(rows[i][lower:], func(a, b coUse) int { return int(a.j - b.j) })
		rows[i] = slices.Clip(rows[i])
		tl.neighbors[i] = js
	}
	for i := range n {
		if r.err == nil && len(rows[i]) != len(tl.neighbors[i]) {
			r.err = errCache // a pair a higher skill does not list
		}
	}
	prev := -1
	tl.others = make([]int32, r.count(1))
	for x := range tl.others {
		d := r.n()
		prev += d
		if d == 0 || prev >= runs {
			r.err = errCache
		}
		tl.others[x] = int32(prev)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errCache
	}
	if r.err != nil {
		return nil, r.err
	}
	return tl, nil
}
