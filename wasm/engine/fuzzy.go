package engine

import (
	"strings"

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
	// costs its postings, and saves binary searches for the names that share only one or two
	// rare bigrams with the identifier. 2 was fastest at 100,000 skills (1 and 3 within 10%).
	prefixExtra = 2
)

// typoTerms returns lexicon terms within a small edit distance of word, which is not itself a
// lexicon term: distance 1 up to 7 bytes, 2 beyond. Only terms with the same first byte are
// considered; a typo in the first letter is rare and the restriction keeps the scan cheap.
func typoTerms(g *graphs.Graph, word string) []int {
	if len(word) < minTypoLength {
		return nil
	}
	maxd := 1
	if len(word) >= 8 {
		maxd = 2
	}
	// Terms are sorted, so those sharing the first byte form one run.
	lo, _ := g.FindTerm(word[:1])
	best, bestd := []int(nil), maxd+1
	for t := lo; t < g.NumTerms(); t++ {
		term := g.Term(t)
		if term[0] != word[0] {
			break
		}
		if diff := len(term) - len(word); diff > maxd || -diff > maxd {
			continue
		}
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

// isNamePunct reports whether r is one of the separators _ - . / : of skill names.
func isNamePunct(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' || r == ':' }

// identifiers returns the distinct tokens of a query that look like skill identifiers — runs of
// letters and digits joined by '_', '-', '.', '/' or ':', or camelCase — normalized by normName,
// at most maxIdentifiers of them.
func identifiers(query string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(query, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	}) {
		// strings.Trim(f, "_-./:") and strings.ContainsAny(f, "_-.:/"), with functions the
		// WebAssembly module links anyway.
		f = strings.TrimFunc(f, isNamePunct)
		if strings.ContainsFunc(f, isNamePunct) || hasInnerUpper(f) {
			if id := normName(f); id != "" && !seen[id] {
				seen[id] = true
				out = append(out, id)
				if len(out) == maxIdentifiers {
					break
				}
			}
		}
	}
	return out
}

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
func normName(s string) string { return strings.Join(Words(s), " ") }

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
	lens  []uint8            // len(names[i]), at most 255: only shorter names are in grams
	grams map[uint32][]int32 // gramKey(bigram with its occurrence number, name length) → names
	short []int32            // names too short for the bigram bound to exclude anything
	long  []int32            // names longer than maxGramName, not indexed: compared directly
}

func newNameIndex(g *graphs.Graph) nameIndex {
	ix := nameIndex{names: make([]string, g.NumSkills()), lens: make([]uint8, g.NumSkills()), grams: map[uint32][]int32{}}
	var buf []uint32
	for i := range ix.names {
		name := normName(g.Name(i))
		ix.names[i] = name
		ix.lens[i] = uint8(min(len(name), 255))
		if gramBound(len(name), len(name)) <= 0 {
			ix.short = append(ix.short, int32(i))
		}
		if len(name) > maxGramName {
			ix.long = append(ix.long, int32(i))
			continue
		}
		buf = bigrams(name, buf[:0])
		for _, q := range buf {
			k := gramKey(q, len(name))
			ix.grams[k] = append(ix.grams[k], int32(i))
		}
	}
	return ix
}

// bigrams appends the byte bigrams of s to out, each tagged with how many times it occurred
// before (capped at 70): bytes b0, b1 and the count packed as b0<<16 | b1<<8 | count.
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

// gramKey packs a tagged bigram (24 bits, the count below 128) with a name length (longer
// names share the class 255).
func gramKey(q uint32, length int) uint32 {
	return (q&^0xff)<<7 | (q&0x7f)<<8 | uint32(min(length, 255))
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

// hasPosting reports whether the ascending list ps holds v. It is search (engine.go) written out
// for int32 lists: it runs for every candidate name and list, where a closure call per step
// would cost more than the comparison, in WebAssembly most of all.
func hasPosting(ps []int32, v int32) bool {
	lo, hi := 0, len(ps)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ps[h] < v {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo < len(ps) && ps[lo] == v
}

// match returns the names similar to any of ids, with their best similarity, in no particular
// order.
func (ix *nameIndex) match(sc *scratch, ids []string) []candidate {
	best := map[int32]float64{}
	var order []int32
	check := func(id string, v int32) {
		if s := nameSimilarity(id, ix.names[v]); s >= nameMatchMin && s > best[v] {
			if _, ok := best[v]; !ok {
				order = append(order, v)
			}
			best[v] = s
		}
	}
	var idGrams []uint32
	hit, lists, postings, needs := sc.hit[:0], sc.lists[:0], sc.postings[:0], sc.needs[:0]
	defer func() {
		clear(postings) // no postings kept alive by the pool
		sc.hit, sc.lists, sc.postings, sc.needs = hit[:0], lists[:0], postings[:0], needs[:0]
	}()
	counts := sc.count
	for _, id := range ids {
		stamp := sc.nextNameStamp()
		if len(id) > maxGramName {
			// Too long for the bigram index (tagging bigrams is quadratic in the length):
			// compare with every name of a possible length.
			for v, name := range ix.names {
				if similarLength(len(id), len(name)) {
					check(id, int32(v))
				}
			}
			continue
		}
		for _, v := range ix.long {
			if similarLength(len(id), len(ix.names[v])) {
				check(id, v)
			}
		}
		idGrams = bigrams(id, idGrams[:0])
		// The name lengths the similarity allows, and the fewest bigrams a similar name shares
		// with id over them (gramBound is not monotone in the length).
		least, lo, hi := -1, -1, -1
		for lb := len(id) * 3 / 4; lb <= len(id)*4/3+1; lb++ {
			if similarLength(len(id), lb) {
				if lo < 0 {
					lo = lb
				}
				hi = lb
				if b := gramBound(len(id), lb); least < 0 || b < least {
					least = b
				}
			}
		}
		if least > 0 {
			// Prefix filter: a name sharing at least `least` of the identifier's (distinct,
			// tagged) bigrams shares one of any len(idGrams)-least+1 of them. Only the postings
			// of that many bigrams (and prefixExtra more), the rarest, are scanned; a name found
			// there that can still reach its bound is then looked up in the other lists, of its
			// own length only, by binary search (postings are in name order). Common bigrams
			// ("er", "-t") have the longest lists: at 100,000 skills scanning them all was most
			// of a query's name matching.
			width := min(hi, 255) - lo + 1
			lists = lists[:0]
			postings = postings[:0]
			for i, q := range idGrams {
				total := 0
				for lb := lo; lb < lo+width; lb++ {
					ps := ix.grams[gramKey(q, lb)]
					postings = append(postings, ps)
					total += len(ps)
				}
				lists = append(lists, gramList{i, total})
			}
			// Insertion sort by total length, then position: at most 254 entries, usually a
			// dozen or two.
			for i := 1; i < len(lists); i++ {
				for j := i; j > 0 && lists[j].total < lists[j-1].total; j-- {
					lists[j], lists[j-1] = lists[j-1], lists[j]
				}
			}
			scan := min(len(lists), len(lists)-least+1+prefixExtra)
			// Count the bigrams each name of a possible length shares with id among the
			// scanned ones.
			hit = hit[:0]
			for _, l := range lists[:scan] {
				for _, ps := range postings[l.gram*width : (l.gram+1)*width] {
					for _, v := range ps {
						// One word per name: the identifier's stamp above 8 bits of count.
						x := counts[v]
						if x>>8 != stamp {
							x = stamp << 8
							hit = append(hit, v)
						}
						counts[v] = x + 1
					}
				}
			}
			rest := lists[scan:]
			// The bigrams a name of each possible length must share with id.
			needs = needs[:0]
			for lb := lo; lb < lo+width; lb++ {
				needs = append(needs, gramBound(len(id), lb))
			}
			for _, v := range hit {
				c := int(counts[v] & 0xff)
				col := int(ix.lens[v]) - lo
				need := needs[col]
				if c+len(rest) < need {
					continue
				}
				for k, l := range rest {
					if c >= need || c+len(rest)-k < need {
						break
					}
					if hasPosting(postings[l.gram*width+col], v) {
						c++
					}
				}
				if c >= need {
					check(id, v)
				}
			}
		}
		for _, v := range ix.short {
			if counts[v]>>8 != stamp {
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
	out := make([]candidate, 0, len(order))
	for _, v := range order {
		out = append(out, candidate{int(v), best[v]})
	}
	return out
}
