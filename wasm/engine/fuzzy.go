package engine

import (
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
)

// Fuzzy matching covers what exact terms miss: typos in query words and skill identifiers
// written into a query ("run extract_tables", "use pdf-extarct").
const (
	typoWeight     = 0.7  // a corrected query term counts this much of an exact one
	nameMatchMin   = 0.75 // least name similarity (1 - distance/length) that counts as a mention
	minTypoLength  = 4    // shorter words have too many neighbours at distance 1
	maxIdentifiers = 32   // identifiers of one query compared with the skill names
	maxGramName    = 255  // longer names and identifiers are compared without the bigram index
	// prefixExtra is how many bigram lists beyond the prefix filter's minimum are scanned: each
	// costs its postings, and saves looking up the names that share only one or two rare
	// bigrams with the identifier. In the module, which looks names up one at a time (shares),
	// 2 was fastest at 100,000 skills (1 and 3 within 10%); natively, with verify, 3 is (name
	// matching at 100,000 skills 239–288 µs with 2, 217–225 with 3, 232–267 with 4; at 10,000
	// 44 against 40 µs), and it is prefixExtra+1 there.
	prefixExtra = 2
)

// typoTerms returns lexicon terms within a small edit distance (in runes) of word, which is not
// itself a lexicon term: distance 1 up to 7 bytes, 2 beyond; all those at the least distance
// found. Only terms with the same first byte are considered; a typo in the first letter is rare
// and the restriction keeps the scan cheap. Terms whose length, or whose character mask (see
// charMask), rules out a distance that would be kept are skipped without computing it. A CJK
// bigram (Tokenize) is not corrected: one character off is another word, not a typo.
func typoTerms(g *graphs.Graph, lex *termIndex, word string) []int {
	if len(word) < minTypoLength {
		return nil
	}
	if r, _ := utf8.DecodeRuneInString(word); isCJK(r) {
		return nil
	}
	maxd := 1
	if len(word) >= 8 {
		maxd = 2
	}
	wm, wr := charMask(word), int32(utf8.RuneCountInString(word))
	// Terms are sorted, so those sharing the first byte form one run.
	lo, hi := lex.first[word[0]], lex.first[int(word[0])+1]
	runes, masks := lex.runes[lo:hi], lex.masks[lo:hi]
	masks = masks[:len(runes)]
	best, bestd := []int(nil), maxd
	for k, r := range runes {
		if diff := r - wr; diff > int32(bestd) || -diff > int32(bestd) {
			continue
		}
		if bits.OnesCount32(masks[k]^wm) > 2*bestd {
			continue
		}
		t := int(lo) + k
		term := g.Term(t)
		d := editDistance(word, term, bestd)
		switch {
		case d < bestd:
			best, bestd = append(best[:0], t), d
		case d == bestd:
			best = append(best, t)
		}
	}
	return best
}

// termIndex holds, for every lexicon term, what typoTerms checks before an edit distance: its
// length in runes and its character mask; and where the terms of each first byte start.
type termIndex struct {
	runes []int32
	masks []uint32
	first [257]int32 // the terms starting with byte b are first[b] to first[b+1]
}

func newTermIndex(g *graphs.Graph) termIndex {
	ix := termIndex{runes: make([]int32, g.NumTerms()), masks: make([]uint32, g.NumTerms())}
	for t := range ix.masks {
		term := g.Term(t)
		ix.runes[t], ix.masks[t] = int32(utf8.RuneCountInString(term)), charMask(term)
		if term != "" {
			ix.first[int(term[0])+1]++
		}
	}
	// Counts per first byte, then their running sums: the terms are sorted, so each byte's form
	// one run. (An empty term, which the lexicon does not hold, would sort first.)
	for b := 1; b < len(ix.first); b++ {
		ix.first[b] += ix.first[b-1]
	}
	if g.NumTerms() > 0 && g.Term(0) == "" {
		for b := range ix.first {
			ix.first[b]++
		}
	}
	return ix
}

// charMask is the set of characters s holds, each rune mapped to one of 32 bits (letters to
// their own, digits and the rest shared). One edit adds or removes at most one rune, so at
// most one bit each way: strings at edit distance d have masks differing in at most 2d bits.
func charMask(s string) uint32 {
	var m uint32
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			m |= 1 << (r - 'a')
		case r >= '0' && r <= '9':
			m |= 1 << (26 + (r-'0')%5)
		default:
			m |= 1 << 31
		}
	}
	return m
}

// isNamePunct reports whether r is one of the separators _ - . / : of skill names.
func isNamePunct(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' || r == ':' }

// identifiers returns the distinct tokens of a query that look like skill identifiers — runs of
// letters and digits joined by '_', '-', '.', '/' or ':', or camelCase — normalized by normName,
// at most maxIdentifiers of them.
func identifiers(query string) []string {
	var out []string
	// The fields are runs of identifier bytes (every byte of a multi-byte rune is one, as the
	// rune is); scanned in place, with no list of fields.
	for i := 0; i < len(query) && len(out) < maxIdentifiers; {
		for i < len(query) && identClass[query[i]] == 0 {
			i++
		}
		start := i
		// seen gathers the field's classes, and identCamel for a lower-case letter followed
		// by a capital (hasInnerUpper).
		var seen, prev uint8
		for i < len(query) && identClass[query[i]] != 0 {
			c := identClass[query[i]]
			seen |= c | ((prev&identLower)<<1)&((c&identUpper)<<2)
			prev = c
			i++
		}
		// A field without a separator or an inner capital is a word ("Create", "files"): most of
		// a task text, left at one table look-up a byte. In WebAssembly the checks below cost an
		// indirect call a rune (isNamePunct), and they ran on every word.
		if seen&(identPunct|identCamel) == 0 {
			continue
		}
		// strings.Trim(f, "_-./:") and strings.ContainsAny(f, "_-.:/"), with functions the
		// WebAssembly module links anyway (trimLeft, trimRight).
		f := trimRight(trimLeft(query[start:i], isNamePunct), isNamePunct)
		if f == "" || !strings.ContainsFunc(f, isNamePunct) && !hasInnerUpper(f) {
			continue
		}
		if id := normName(f); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// isIdentByte reports whether b can be part of an identifier: a letter, a digit, a name
// separator (isNamePunct) or a byte of a multi-byte rune.
func isIdentByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || b == '/' || b == ':' ||
		b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b > 127
}

// Bits of identClass: identByte for a byte isIdentByte accepts, identPunct for a name separator
// (isNamePunct), identUpper and identLower for an ASCII capital and lower-case letter; identCamel
// is identLower<<1, which identifiers sets for a lower-case letter followed by a capital.
const (
	identByte = 1 << iota
	identPunct
	identUpper
	identLower
	identCamel
)

// identClass is each byte's identifier bits, for identifiers.
var identClass = func() (t [256]uint8) {
	for b := range 256 {
		if isIdentByte(byte(b)) {
			t[b] |= identByte
		}
		if isNamePunct(rune(b)) {
			t[b] |= identPunct
		}
		if b >= 'A' && b <= 'Z' {
			t[b] |= identUpper
		}
		if b >= 'a' && b <= 'z' {
			t[b] |= identLower
		}
	}
	return t
}()

func hasInnerUpper(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// normName folds an identifier to lower-case words joined by single spaces, so that
// "Get_Current-Time", "getCurrentTime" and "get current time" compare equal.
//
// It is strings.Join(Words(s), " ") written into one buffer: identifiers calls it for every
// identifier of a query, and the list of words and the joining were most of its allocations.
func normName(s string) string {
	b := make([]byte, 0, len(s))
	n := 0
	eachWord(s, func(w string) {
		if n > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
		n++
	})
	return string(b)
}

// nameSimilarity is 1 - editDistance/maxLength of two normalized names.
func nameSimilarity(a, b string) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 0
	}
	if !similarLength(len(a), len(b)) {
		return 0
	}
	// Beyond this distance the similarity is below nameMatchMin, whatever the exact distance.
	bound := int((1-nameMatchMin)*float64(n)) + 1
	return 1 - float64(editDistance(a, b, bound))/float64(n)
}

// nameIndex finds skill names similar to an identifier without comparing it to every name. It
// relies on the q-gram lemma: two strings within edit distance d share at least
// max(len) − 1 − 2d bigrams (counted with multiplicity), so only names reaching that count
// need the exact Levenshtein check. Postings are kept per bigram and name length, so an
// identifier reads only those of the lengths a similar name can have.
type nameIndex struct {
	names []string
	lens  []uint8 // len(names[i]), at most 255: only shorter names are in the bigram lists
	// The postings of a tagged bigram (a bigram with its occurrence number, 24 bits) are kept
	// per name length, in one flat array: grams maps the bigram to its index k, whose name
	// lengths run from first[k] on, length first[k]+j in slot at[k]+j; slot s holds
	// post[slots[s]:slots[s+1]], in name order (planScan reads them). One look-up a bigram,
	// not one per bigram and length, and a few large arrays instead of a slice per bigram and
	// length.
	grams map[uint32]int32
	first []uint8
	at    []int32 // len(first)+1 entries: gram k has at[k+1]-at[k] lengths
	slots []int32
	post  []int32
	short []int32 // names too short for the bigram bound to exclude anything
	long  []int32 // names longer than maxGramName, not indexed: compared directly
}

func newNameIndex(g *graphs.Graph) nameIndex {
	n := g.NumSkills()
	ix := nameIndex{names: make([]string, n), lens: make([]uint8, n), grams: map[uint32]int32{}}
	// Each bigram's index k and range of name lengths, and every name's bigram indices in name
	// order (ks[ends[i-1]:ends[i]] are name i's): found once, laid out below.
	var ks []int32
	var last []uint8
	var buf []uint32
	ends := make([]int32, n)
	for i := range ix.names {
		name := normName(g.Name(i))
		ix.names[i] = name
		ix.lens[i] = uint8(min(len(name), 255))
		if gramBound(len(name), len(name)) <= 0 {
			ix.short = append(ix.short, int32(i))
		}
		if len(name) > maxGramName {
			ix.long = append(ix.long, int32(i))
		} else {
			buf = bigrams(name, buf[:0])
			for _, q := range buf {
				k, ok := ix.grams[q]
				if !ok {
					k = int32(len(ix.first))
					ix.grams[q] = k
					ix.first, last = append(ix.first, 255), append(last, 0)
				}
				ix.first[k], last[k] = min(ix.first[k], ix.lens[i]), max(last[k], ix.lens[i])
				ks = append(ks, k)
			}
		}
		ends[i] = int32(len(ks))
	}
	ix.at = make([]int32, len(ix.first)+1)
	for k := range ix.first {
		ix.at[k+1] = ix.at[k] + int32(last[k]-ix.first[k]) + 1
	}
	// The postings per slot: counted, laid out, then filled in name order. Filling advances each
	// slot's start to the next one's, so the starts are counted one slot on and shifted back.
	ix.slots = make([]int32, ix.at[len(ix.first)]+2)
	for pass := range 2 {
		start := int32(0)
		for i, end := range ends {
			for _, k := range ks[start:end] {
				s := ix.at[k] + int32(ix.lens[i]-ix.first[k])
				if pass == 0 {
					ix.slots[s+2]++
				} else {
					ix.post[ix.slots[s+1]] = int32(i)
					ix.slots[s+1]++
				}
			}
			start = end
		}
		if pass == 0 {
			for s := 2; s < len(ix.slots); s++ {
				ix.slots[s] += ix.slots[s-1]
			}
			ix.post = make([]int32, len(ks))
		}
	}
	ix.slots = ix.slots[:len(ix.slots)-1]
	return ix
}

// postSpan is a run of the name index's postings, post[lo:hi]. The scan plan keeps one per
// bigram and name length in the scratch as a span rather than a subslice: a slice stored in a
// heap array is a pointer write, which costs a write barrier whenever the collector is marking —
// in the WebAssembly module, where the query's own thread does the marking, that was a quarter
// of planning the scan.
type postSpan struct{ lo, hi int32 }

// bigrams appends the byte bigrams of s to out, each tagged with how many times it occurred
// before (capped at 70): bytes b0, b1 and the count packed as b0<<16 | b1<<8 | count.
//
// Not inlined: its quadratic loop would be copied into each of its callers for nothing.
//
//go:noinline
func bigrams(s string, out []uint32) []uint32 {
	start := len(out)
	for i := 0; i+1 < len(s); i++ {
		q := uint32(s[i])<<16 | uint32(s[i+1])<<8
		seen := uint32(0)
		for _, p := range out[start:] {
			if p&^0xff == q {
				seen++
			}
		}
		out = append(out, q|min(seen, 70))
	}
	return out
}

// similarLength reports whether names of lengths la and lb can reach nameMatchMin: they differ
// by at most the distance it allows.
func similarLength(la, lb int) bool {
	n := max(la, lb)
	return float64(n-min(la, lb)) <= (1-nameMatchMin)*float64(n)
}

// gramBound is the least number of shared bigrams of strings of lengths la and lb whose
// similarity can reach nameMatchMin.
func gramBound(la, lb int) int {
	n := max(la, lb)
	d := int((1 - nameMatchMin) * float64(n))
	return n - 1 - 2*d
}

// gramList is one of an identifier's bigrams (its index) and the total length of its postings
// over the name lengths searched.
type gramList struct{ gram, total int }

// countShared adds one to the count of every name of ps (counts[v]: the identifier's stamp above
// 8 bits of count, restarted when the stamp is not the current one) and writes to hit from nh on
// the names whose count reaches that of reach (the stamp above 8 bits of the fewest lists, at
// least 1, in which a name can still reach its bound); it returns the new length. A name is in
// a list at most once, so it is written once, and only names that can still reach their bound
// are. The loop has no branch but its own: each name is written to hit and kept when it
// reaches the count, and the select compiles without a branch. In WebAssembly each taken branch
// goes through the function's block dispatcher (how Go compiles for it), and at 100,000 skills
// a query scans about 90,000 postings here. Natively two names a pass are 15% faster; in
// WebAssembly one a pass is 20% faster and 1.5 KB smaller (docs/rationale.md).
func countShared(ps []int32, counts []uint32, hit []int32, nh int, reach uint32) int {
	stamp := reach >> 8
	i := 0
	if runtime.GOARCH == "amd64" {
		for ; i+2 <= len(ps); i += 2 {
			v := ps[i : i+2 : i+2]
			nh = countOne(counts, hit, nh, v[0], stamp, reach)
			nh = countOne(counts, hit, nh, v[1], stamp, reach)
		}
	}
	for _, v := range ps[i:] {
		nh = countOne(counts, hit, nh, v, stamp, reach)
	}
	return nh
}

// countOne is countShared's step for name v: its count restarted under the current stamp
// (reach's bits above 8) if it holds another, plus one; v written to hit[nh], and kept (nh + 1
// returned) when the count has just reached reach.
func countOne(counts []uint32, hit []int32, nh int, v int32, stamp, reach uint32) int {
	x := counts[v]
	if x>>8 != stamp {
		x = stamp << 8
	}
	x++
	counts[v] = x
	hit[nh] = v
	return nh + b2i(x == reach)
}

// hasPosting reports whether the ascending list ps holds v. It is search (engine.go) written out
// for int32 lists: it runs for every candidate name and list, where a closure call per step
// would cost more than the comparison, in WebAssembly most of all. Each step halves the range
// with a select rather than a branch: how many steps depends on len(ps) alone, and which half
// holds v, a coin toss to the branch predictor, was a quarter of looking names up.
func hasPosting(ps []int32, v int32) bool {
	if len(ps) == 0 {
		return false
	}
	at, n := 0, len(ps)
	for n > 1 {
		half := n >> 1
		at += half & -b2i(ps[at+half] <= v)
		n -= half
	}
	return ps[at] == v
}

// match returns the names similar to any of ids, with their best similarity, in no particular
// order.
func (ix *nameIndex) match(sc *scratch, ids []string) []candidate {
	// The names found, in the order first found, with their best similarity; sc.linked maps a
	// name to its place in out.
	var out []candidate
	found := &sc.linked
	found.reset(len(ix.names))
	check := func(id string, v int32) {
		s := nameSimilarity(id, ix.names[v])
		if s < nameMatchMin {
			return
		}
		if k, ok := found.get(int(v)); ok {
			out[k].score = max(out[k].score, s)
			return
		}
		found.set(int(v), len(out))
		out = append(out, candidate{int(v), s})
	}
	// Every name is found once per identifier, and one more slot takes the write after the last.
	if len(sc.hit) <= len(ix.names) {
		sc.hit = make([]int32, len(ix.names)+1)
	}
	for _, id := range ids {
		ix.matchIdentifier(sc, id, check)
	}
	return out
}

// matchIdentifier calls check(id, v) for every name v that can be similar to id.
func (ix *nameIndex) matchIdentifier(sc *scratch, id string, check func(id string, v int32)) {
	stamp := sc.nextNameStamp()
	if len(id) > maxGramName {
		// Too long for the bigram index (tagging bigrams is quadratic in the length): compare
		// with every name of a possible length.
		for v, name := range ix.names {
			if similarLength(len(id), len(name)) {
				check(id, int32(v))
			}
		}
		return
	}
	for _, v := range ix.long {
		if similarLength(len(id), len(ix.names[v])) {
			check(id, v)
		}
	}
	least, lo, hi := similarLengths(len(id))
	if least > 0 {
		ix.prefixFilter(sc, id, lo, hi, stamp, check)
	}
	for _, v := range ix.short {
		if sc.count[v]>>8 != stamp {
			check(id, v)
		}
	}
	if least <= 0 {
		// A very short identifier can match names it shares no bigram with.
		for v := range ix.names {
			check(id, int32(v))
		}
	}
}

// similarLengths returns the name lengths lo to hi the similarity allows for an identifier of n
// bytes, and the fewest bigrams a similar name shares with it over them (gramBound is not
// monotone in the length).
func similarLengths(n int) (least, lo, hi int) {
	least, lo, hi = -1, -1, -1
	for lb := n * 3 / 4; lb <= n*4/3+1; lb++ {
		if similarLength(n, lb) {
			if lo < 0 {
				lo = lb
			}
			hi = lb
			if b := gramBound(n, lb); least < 0 || b < least {
				least = b
			}
		}
	}
	return least, lo, hi
}

// prefixFilter checks (with check) the names of lengths lo to hi that share enough bigrams with
// id to be similar. A name that must share at least b of the identifier's (distinct, tagged)
// bigrams shares one of any len(bigrams)-b+1 of them. Only the postings of that many bigrams
// (and prefixExtra more), the rarest, are scanned; a name found there in enough of them to
// still reach its bound is then looked up in the other lists, of its own length only, by binary
// search (postings are in name order). Common bigrams ("er", "-t") have the longest lists: at
// 100,000 skills scanning them all was most of a query's name matching.
func (ix *nameIndex) prefixFilter(sc *scratch, id string, lo, hi int, stamp uint32,
	check func(id string, v int32)) {
	sc.grams = bigrams(id, sc.grams[:0])
	p := ix.planScan(sc, sc.grams, len(id), lo, min(hi, 255)-lo+1)
	hits := sc.hit[:p.count(sc.count, sc.hit, stamp)]
	if runtime.GOARCH != "wasm" {
		// verify's code would cost the module 2.7 KB gzip (docs/rationale.md); there, each name is
		// looked up on its own, which gives the same names.
		for _, v := range p.verify(sc, hits, ix.lens) {
			check(id, v)
		}
		return
	}
	for _, v := range hits {
		if col := int(ix.lens[v]) - lo; p.shares(v, col, int(sc.count[v]&0xff), p.scans[col]) {
			check(id, v)
		}
	}
}

// A gramScan is the prefix filter's plan for one identifier: its bigram lists, rarest first,
// with their postings for each name length searched, and for each of those lengths the bigrams
// a name must share, how many of the rarest lists are scanned and in how many of those a name
// must be found to reach the bigrams it needs with the others. Name length lo+col is column col.
type gramScan struct {
	lo, width int
	lists     []gramList
	post      []int32 // the name index's postings
	// spans[l.gram*width+col] is where in post the names of column col holding bigram l.gram are.
	spans   []postSpan
	needs   []int // per column: the bigrams a name must share with the identifier
	scans   []int // per column: how many of the rarest lists are scanned
	least   []int // per column: in how many scanned lists a name must be, at least 1
	maxScan int   // the most lists scanned for any column
}

// planScan plans the prefix filter for an identifier of idLen bytes and bigrams grams over the
// names of lengths lo to lo+width-1, in sc's buffers.
func (ix *nameIndex) planScan(sc *scratch, grams []uint32, idLen, lo, width int) gramScan {
	// Each bigram's row of spans, one a column: the columns within the bigram's name lengths
	// (first[k] on, at[k+1]-at[k] of them) read its consecutive slots, the others stay empty.
	// Slots are prefix sums, so a row's total is one subtraction; the loop has no branch but
	// its own, which in WebAssembly is what a pass costs most.
	lists, spans := sc.lists[:0], sc.spans[:0]
	spans = append(spans, make([]postSpan, len(grams)*width)...)
	for i, q := range grams {
		total := 0
		if k, ok := ix.grams[q]; ok {
			first := int(ix.first[k])
			from, to := max(lo, first), min(lo+width, first+int(ix.at[k+1]-ix.at[k]))
			if from < to {
				cols := spans[i*width+from-lo : i*width+to-lo]
				slots := ix.slots[ix.at[k]+int32(from-first):][:len(cols)+1]
				for c := range cols {
					cols[c] = postSpan{slots[c], slots[c+1]}
				}
				total = int(slots[len(cols)] - slots[0])
			}
		}
		lists = append(lists, gramList{i, total})
	}
	// Insertion sort by total length, then position: at most 254 entries, usually a dozen or two.
	for i := 1; i < len(lists); i++ {
		for j := i; j > 0 && lists[j].total < lists[j-1].total; j-- {
			lists[j], lists[j-1] = lists[j-1], lists[j]
		}
	}
	// The bigrams a name of each length must share with the identifier, how many of the rarest
	// lists are scanned for names of that length (fewer for longer names, which need more) and
	// in how many of them it must be: a name found in fewer cannot make up its bound with the
	// lists not scanned.
	needs := sc.needs[:0]
	for lb := lo; lb < lo+width; lb++ {
		needs = append(needs, gramBound(idLen, lb))
	}
	maxScan := 0
	for col := range width {
		scan := max(0, min(len(lists), len(lists)-needs[col]+1+prefixExtra+b2i(runtime.GOARCH != "wasm")))
		needs = append(needs, scan)
		maxScan = max(maxScan, scan)
	}
	for col := range width {
		needs = append(needs, max(1, needs[col]-len(lists)+needs[width+col]))
	}
	sc.lists, sc.spans, sc.needs = lists, spans, needs
	return gramScan{lo: lo, width: width, lists: lists, post: ix.post, spans: spans,
		needs: needs[:width], scans: needs[width : 2*width], least: needs[2*width:], maxScan: maxScan}
}

// count counts the bigrams each name shares with the identifier among the lists scanned for its
// length (see countShared) and writes to hit the names found in enough of them to still reach
// their bound; it returns how many it wrote.
func (p *gramScan) count(counts []uint32, hit []int32, stamp uint32) int {
	lists, post, spans, scans, least, width := p.lists[:p.maxScan], p.post, p.spans, p.scans, p.least, p.width
	nh := 0
	for k, l := range lists {
		for col, s := range spans[l.gram*width : (l.gram+1)*width] {
			if k >= scans[col] {
				continue
			}
			nh = countShared(post[s.lo:s.hi], counts, hit, nh, stamp<<8|uint32(least[col]))
		}
	}
	return nh
}

// verify returns the names of hits (found in enough of the scanned lists to still reach their
// bound; sc.count holds how many) that share the bigrams they need with the identifier, in hits'
// buffer. The lists not scanned are read rarest first, each for the names still undecided: a
// name that has its bigrams is kept, one that can no longer reach them is dropped. A list's
// postings of one name length are looked up name by name (hasPosting) while few names of that
// length are undecided, and marked in sc.mark when that costs less: at 100,000 skills the binary
// searches over the common bigrams' long lists were a fifth of a query.
// shares reports whether name v of column col, found in c of the lists before from, shares the
// bigrams it needs with the identifier: the lists from from on are looked up until it has them
// or can no longer reach them. verify's answer for one name: in the module, and natively for the
// last few undecided names.
func (p *gramScan) shares(v int32, col, c, from int) bool {
	need, rest := p.needs[col], p.lists[from:]
	for k, l := range rest {
		if c >= need || c+len(rest)-k < need {
			break
		}
		if s := p.spans[l.gram*p.width+col]; hasPosting(p.post[s.lo:s.hi], v) {
			c++
		}
	}
	return c >= need
}

// markMin is the fewest undecided names for which verify reads a list for all of them: below it,
// counting them per name length costs more than looking each up in the lists left (shares).
const markMin = 16

func (p *gramScan) verify(sc *scratch, hits []int32, lens []uint8) []int32 {
	counts, lists, np := sc.count, p.lists, 0
	live, first := sc.live[:0], len(lists)
	if len(hits) < markMin {
		for _, v := range hits {
			if col := int(lens[v]) - p.lo; p.shares(v, col, int(counts[v]&0xff), p.scans[col]) {
				hits[np] = v
				np++
			}
		}
		return hits[:np]
	}
	for _, v := range hits {
		col := int(lens[v]) - p.lo
		switch c := int(counts[v] & 0xff); {
		case c >= p.needs[col]:
			hits[np] = v
			np++
		case c+len(lists)-p.scans[col] >= p.needs[col]:
			live = append(live, v)
			first = min(first, p.scans[col])
		}
	}
	cols := append(sc.cols[:0], make([]int32, p.width)...)
	for k := first; k < len(lists) && len(live) > 0; k++ {
		if len(live) < markMin {
			for _, v := range live {
				if col := int(lens[v]) - p.lo; p.shares(v, col, int(counts[v]&0xff), max(k, p.scans[col])) {
					hits[np] = v
					np++
				}
			}
			live = live[:0]
			break
		}
		row := p.spans[lists[k].gram*p.width : (lists[k].gram+1)*p.width]
		clear(cols)
		for _, v := range live {
			cols[int(lens[v])-p.lo]++
		}
		stamp := uint32(0)
		for col, m := range cols {
			if s := row[col]; m > 0 && k >= p.scans[col] && int(m)*2*bits.Len32(uint32(s.hi-s.lo)) > int(s.hi-s.lo) {
				if stamp == 0 {
					stamp = sc.nextStamp()
				}
				for _, u := range p.post[s.lo:s.hi] {
					sc.mark[u] = stamp
				}
				cols[col] = -1
			}
		}
		next := live[:0]
		for _, v := range live {
			col := int(lens[v]) - p.lo
			if k < p.scans[col] {
				next = append(next, v)
				continue
			}
			var in bool
			if s := row[col]; stamp != 0 && cols[col] < 0 {
				in = sc.mark[v] == stamp
			} else {
				in = hasPosting(p.post[s.lo:s.hi], v)
			}
			c := int(counts[v]&0xff) + b2i(in)
			counts[v] = counts[v]&^0xff | uint32(c)
			switch {
			case c >= p.needs[col]:
				hits[np] = v
				np++
			case c+len(lists)-k-1 >= p.needs[col]:
				next = append(next, v)
			}
		}
		live = next
	}
	sc.live, sc.cols = live[:0], cols[:0]
	return hits[:np]
}
