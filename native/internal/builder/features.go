package builder

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// skillRole is a skill's place in a typical procedure, read by the structural signal. Roles are
// ordered: a skill of an earlier role tends to precede one of a later role on the same object.
type skillRole int

// Roles in procedure order. roleRepair and roleNone stand outside the order.
const (
	roleNone skillRole = iota
	roleLocate
	roleAcquire
	roleTransform
	roleVerify
	roleDeliver
	roleRepair
)

var roleNames = [...]string{"none", "locate", "acquire", "transform", "verify", "deliver", "repair"}

func (r skillRole) String() string { return roleNames[r] }

func (r skillRole) ordered() bool { return r >= roleLocate && r <= roleDeliver }

// roleVerbs maps a stemmed leading verb to its role. The lists favour the verbs that open skill
// and tool names ("get_", "find-", "validate_", "send_").
var roleVerbs = func() map[string]skillRole {
	m := map[string]skillRole{}
	for role, verbs := range map[skillRole]string{
		roleLocate: `find locate search lookup look discover detect scan explore browse list query
			navigate go goto walk move identify seek`,
		roleAcquire: `get fetch retrieve read load download pick take grab open obtain collect gather
			acquire import extract receive pull access parse fill prepare setup install connect
			login authenticate init initialize start`,
		roleTransform: `set update change convert transform heat cool warm chill boil melt freeze mix
			combine build create make generate compute calculate edit modify write slice cut clean
			wash turn toggle switch enable disable adjust apply add remove delete plant water grow
			translate format merge split sort filter compress encode decode render design train
			analyze analyse process run execute use configure assemble attach wire insert pour
			stir dissolve`,
		roleVerify: `check verify validate test measure inspect confirm examine ensure assert review
			compare evaluate monitor audit observe debug lint`,
		roleDeliver: `send share place put deliver publish submit report save store export email
			post notify upload deploy return present close finish store commit drop give print
			show display output book reserve buy purchase order schedule pay rent checkout play`,
		roleRepair: `fix repair recover retry troubleshoot restore reset rollback undo reopen resolve
			handle`,
	} {
		for _, v := range strings.Fields(verbs) {
			m[engine.Stem(v)] = role
		}
	}
	return m
}()

// slot is one input or output of a skill: a declared field or one extracted from text.
type slot struct {
	key      string   // normalized name, for exact matching of declared fields
	tokens   []string // stemmed content tokens
	declared bool
	optional bool // an input the schema does not list as required (while it lists others)
	// sense is what the field is about beyond its name: its description's and its skill's
	// object tokens, less the name's own tokens, TF-IDF weighted, unit length (nil when
	// nothing is left). Two fields named "program", one "a strength and conditioning program
	// for an individual" and one "the quantum computing program to run", share a name and
	// no sense.
	sense sparse
	// bare is set when the skill acts on nothing but the field's own name
	// (createBrand returns brand_id): any skill about that name is about the same thing.
	bare bool
}

// features is what the signals read about one skill.
type features struct {
	role     skillRole
	object   sparse // name tokens without the role verb, TF-IDF weighted, unit length
	text     sparse // name, description and tags, TF-IDF weighted, unit length
	inputs   []slot
	outputs  []slot
	deps     []int // skills this one declares as prerequisites
	mentions []int // skills whose names its description or body mentions
}

// extractFeatures computes the features of every skill. index maps names to skill ids.
func extractFeatures(skills []ingest.Skill, index map[string]int) ([]features, map[string]float64) {
	n := len(skills)
	texts := make([][]string, n)
	objects := make([][]string, n)
	fs := make([]features, n)
	// Per skill, in parallel: its tokens, each distinct token once, role and object, and the
	// distinct tokens of its name. The counts over the library are then summed in skill order.
	distinct := make([][]string, n)
	nameTokens := make([][]string, n)
	parallel(n, func() func(i int) {
		return func(i int) {
			s := &skills[i]
			texts[i] = engine.Tokenize(s.Name + " " + s.Description + " " + strings.Join(s.Tags, " "))
			distinct[i] = unique(texts[i])
			fs[i].role, objects[i] = nameRole(s.Name, s.Description)
			nameTokens[i] = unique(engine.Tokenize(s.Name))
		}
	}, nil)
	idf, nameIDF := inverseDF(distinct), inverseDF(nameTokens)
	var topIDF float64
	for _, w := range idf {
		topIDF = max(topIDF, w)
	}
	parallel(n, func() func(i int) {
		return func(i int) { fs[i].fill(&skills[i], i, texts[i], objects[i], index, idf, topIDF, nameTokens, nameIDF) }
	}, nil)
	internTerms(fs)
	return fs, idf
}

// fill computes the features of skill i, s, other than its role, from its tokens and object
// and the library's statistics. It writes only f.
func (f *features) fill(s *ingest.Skill, i int, text, object []string, index map[string]int, idf map[string]float64,
	topIDF float64, nameTokens [][]string, nameIDF map[string]float64) {
	f.text = unitVector(text, idf)
	f.object = unitVector(object, idf)
	anyRequired := false
	for _, in := range s.Inputs {
		anyRequired = anyRequired || in.Required
	}
	for _, in := range s.Inputs {
		x := declaredSlot(in.Name)
		x.optional = anyRequired && !in.Required
		x.sense, x.bare = fieldSense(x, in.Description, object, idf, topIDF)
		f.inputs = append(f.inputs, x)
	}
	for _, out := range s.Outputs {
		o := declaredSlot(out.Name)
		o.sense, o.bare = fieldSense(o, out.Description, object, idf, topIDF)
		f.outputs = append(f.outputs, o)
	}
	if len(s.Outputs) == 0 {
		// A JSON sample of the result in the description declares the result's fields.
		for _, key := range sampleFields(s.Description) {
			o := declaredSlot(key)
			o.sense, o.bare = fieldSense(o, "", object, idf, topIDF)
			f.outputs = append(f.outputs, o)
		}
	}
	if len(f.outputs) == 0 && (f.role == roleAcquire || f.role == roleLocate || f.role == roleTransform) &&
		len(object) > 0 {
		// A getter's product is what its name says it gets: get_system_language → language.
		f.outputs = append(f.outputs, slot{key: strings.Join(object, " "), tokens: object})
	}
	for _, d := range s.DependsOn {
		if j, ok := index[d]; ok && j != i {
			f.deps = append(f.deps, j)
		}
	}
	for _, in := range s.Inputs {
		if j := referent(in.Description, nameTokens, nameIDF, i); j >= 0 && !slices.Contains(f.deps, j) {
			f.deps = append(f.deps, j)
		}
	}
	sort.Ints(f.deps)
	f.mentions = mentions(s.Description+"\n"+s.Body, index, i)
}

// inverseDF is the IDF, ln(1 + n/df), of every token of docs, n documents of distinct tokens.
func inverseDF(docs [][]string) map[string]float64 {
	df := map[string]int{}
	for _, ts := range docs {
		for _, t := range ts {
			df[t]++
		}
	}
	idf := make(map[string]float64, len(df))
	for t, d := range df {
		idf[t] = math.Log(1 + float64(len(docs))/float64(d))
	}
	return idf
}

// unique returns the distinct tokens of ts in first-seen order.
func unique(ts []string) []string {
	seen := make(map[string]bool, len(ts))
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// sourceRE finds where an input's description says its value comes from: "can be extracted from
// the Search Airport API", "the id returned by list_items", "obtained from Tripadvisor's Search
// Restaurants API".
var sourceRE = regexp.MustCompile(`(?i)\b(?:returned by|obtained from|extracted from|retrieved from|output of|provided by|comes from|taken from)\s+(?:the\s+)?([^.,;:()]{3,80})`)

// referenceNoise are words of a source phrase that name no skill: "the Search Airport API in
// the Flights collection".
var referenceNoise = map[string]bool{"api": true, "endpoint": true, "tool": true, "function": true,
	"call": true, "respons": true, "response": true, "result": true, "collection": true, "in": true,
	"the": true, "of": true, "this": true, "a": true, "an": true}

// referent is the skill an input's description names as the source of its value, or -1: among
// the skills (other than self) whose names share at least two words and at least half of their
// words with the source phrase, the one whose shared words are the rarest among names (summed
// nameIDF), then the one whose name they cover most; a tie names no one.
func referent(description string, nameTokens [][]string, nameIDF map[string]float64, self int) int {
	m := sourceRE.FindStringSubmatch(description)
	if m == nil {
		return -1
	}
	words := map[string]bool{}
	for _, t := range engine.Tokenize(m[1]) {
		if !referenceNoise[t] {
			words[t] = true
		}
	}
	if len(words) < 2 {
		return -1
	}
	best, bestScore, bestCover, tie := -1, 0.0, 0.0, false
	for j, toks := range nameTokens {
		if j == self || len(toks) == 0 {
			continue
		}
		shared, score := 0, 0.0
		for _, t := range toks {
			if words[t] {
				shared++
				score += nameIDF[t]
			}
		}
		if shared < 2 || 2*shared < len(toks) {
			continue
		}
		cover := float64(shared) / float64(len(toks))
		switch {
		case score > bestScore, score == bestScore && cover > bestCover:
			best, bestScore, bestCover, tie = j, score, cover, false
		case score == bestScore && cover == bestCover:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return best
}

// nameRole finds the role of a skill from the first role verb of its name (or, failing that,
// of its description) and returns the remaining content tokens of the name as its object.
func nameRole(name, description string) (skillRole, []string) {
	words := engine.Tokenize(name)
	role := roleNone
	var object []string
	for k, w := range words {
		if r, ok := roleVerbs[w]; ok && role == roleNone && k < 2 {
			role = r
			continue
		}
		object = append(object, w)
	}
	if role == roleNone {
		for k, w := range engine.Tokenize(description) {
			if k >= 3 {
				break
			}
			if r, ok := roleVerbs[w]; ok {
				role = r
				break
			}
		}
	}
	return role, object
}

// maxSampleTries is how many '{' of a description sampleFields tries as the start of a JSON
// object, so that a long text full of braces costs a bounded number of parses.
const maxSampleTries = 4

// sampleFields returns the top-level keys, sorted and distinct, of the first JSON object in
// description ("Retrieve a film. Sample response: {"title": "…", "year": 1997}"), or nil when it
// holds none. Collections of REST APIs write a sample of each endpoint's result into its
// description instead of an output schema; the sample's keys are the fields the endpoint
// returns, as an outputSchema's properties are. Without them induction falls back to the object
// of the name (get_film_info returns "film info"), which matched any input of that word: on the
// verbose-API catalogs this made 2,200 dependency edges of 800 tools and took the graph .06
// below the seeds (native/lab/NOTES.md, "JSON samples as declared outputs").
func sampleFields(description string) []string {
	rest := description
	for try := 0; try < maxSampleTries; try++ {
		k := strings.IndexByte(rest, '{')
		if k < 0 {
			return nil
		}
		rest = rest[k:]
		var m map[string]json.RawMessage
		if json.NewDecoder(strings.NewReader(rest)).Decode(&m) == nil && len(m) > 0 {
			keys := make([]string, 0, len(m))
			for key := range m {
				if strings.TrimSpace(key) != "" {
					keys = append(keys, key)
				}
			}
			slices.Sort(keys)
			return keys
		}
		rest = rest[1:]
	}
	return nil
}

func declaredSlot(name string) slot {
	return slot{key: strings.Join(engine.Words(name), " "), tokens: engine.Tokenize(name), declared: true}
}

// fieldSense is the sense vector of a declared field x (slot.sense) from its description and
// its skill's object tokens, and whether the skill's object holds nothing beyond x's name.
// Tokens the library's texts never use weigh as much as the rarest that they do.
func fieldSense(x slot, description string, object []string, idf map[string]float64, top float64) (sparse, bool) {
	own := map[string]bool{}
	for _, t := range x.tokens {
		own[t] = true
	}
	bare := true
	for _, t := range object {
		bare = bare && own[t]
	}
	acc := map[string]float64{}
	for _, t := range append(engine.Tokenize(description), object...) {
		if own[t] {
			continue
		}
		w, ok := idf[t]
		if !ok {
			w = top
		}
		acc[t] += w
	}
	return normalized(acc), bare
}

// normalized returns acc as a sparse vector of unit length, nil when it has no weight.
func normalized(acc map[string]float64) sparse {
	v := make(sparse, 0, len(acc))
	for t, w := range acc {
		if w > 0 {
			v = append(v, termWeight{term: t, w: w})
		}
	}
	if len(v) == 0 {
		return nil
	}
	sort.Slice(v, func(a, b int) bool { return v[a].term < v[b].term })
	var norm float64
	for _, e := range v { // in term order, so that the same library gives the same bits
		norm += e.w * e.w
	}
	norm = math.Sqrt(norm)
	for k := range v {
		v[k].w /= norm
	}
	return v
}

// sparse is a vector over terms, sorted by term, so that sums run in one fixed order and the
// same library always gives the same floats.
type sparse []termWeight

type termWeight struct {
	term string
	id   int32 // the term's rank in the library's sorted vocabulary (internTerms), for cosine
	w    float64
}

// internTerms numbers the terms of every vector of fs in sorted order, so that cosine compares
// integers instead of strings and still sums in the same order as by term.
func internTerms(fs []features) {
	each := func(visit func(v sparse)) {
		for i := range fs {
			f := &fs[i]
			visit(f.text)
			visit(f.object)
			for _, x := range f.inputs {
				visit(x.sense)
			}
			for _, x := range f.outputs {
				visit(x.sense)
			}
		}
	}
	seen := map[string]int32{}
	var terms []string
	each(func(v sparse) {
		for _, e := range v {
			if _, ok := seen[e.term]; !ok {
				seen[e.term] = 0
				terms = append(terms, e.term)
			}
		}
	})
	sort.Strings(terms)
	for k, t := range terms {
		seen[t] = int32(k)
	}
	each(func(v sparse) {
		for k := range v {
			v[k].id = seen[v[k].term]
		}
	})
}

// unitVector returns the TF-IDF vector of tokens scaled to unit length.
func unitVector(tokens []string, idf map[string]float64) sparse {
	acc := map[string]float64{}
	for _, t := range tokens {
		acc[t] += idf[t]
	}
	v := make(sparse, 0, len(acc))
	for t, w := range acc {
		v = append(v, termWeight{term: t, w: w})
	}
	sort.Slice(v, func(a, b int) bool { return v[a].term < v[b].term })
	var norm float64
	for _, e := range v {
		norm += e.w * e.w
	}
	norm = math.Sqrt(norm)
	for k := range v {
		v[k].w /= norm
	}
	return v
}

// denseText holds one skill's text vector by term id, so that its cosine with many others
// costs one pass over each of them, with the same sum as cosine's. A bitset of the loaded
// terms, small enough to stay in cache, answers the many lookups of absent terms.
type denseText struct {
	w     []float64
	bits  []uint64
	table *textTable // the vectors cosineOf compares with
}

// newDenseText returns scratch space for the text vectors of b's skills.
func (b *builder) newDenseText() *denseText {
	t := b.textTable()
	return &denseText{w: make([]float64, t.size), bits: make([]uint64, (t.size+63)/64), table: t}
}

// textTable holds every skill's text vector (features.text) in flat arrays: the term ids of
// skill j are id[off[j]:off[j+1]], their weights are beside them in w. Scoring a source reads
// the vectors of hundreds of skills, and mostly only their ids: held in one run, four bytes
// each, they cost a fraction of the memory traffic of the sparse vectors' 32-byte entries.
type textTable struct {
	off  []int
	id   []int32
	w    []float64
	size int32 // one more than the largest id
}

// textTable returns b's text table, made on first use.
func (b *builder) textTable() *textTable {
	b.textOnce.Do(func() {
		t := &textTable{off: make([]int, len(b.feat)+1)}
		for j := range b.feat {
			t.off[j+1] = t.off[j] + len(b.feat[j].text)
		}
		t.id, t.w = make([]int32, 0, t.off[len(b.feat)]), make([]float64, 0, t.off[len(b.feat)])
		for j := range b.feat {
			v := b.feat[j].text
			for _, e := range v {
				t.id = append(t.id, e.id)
				t.w = append(t.w, e.w)
			}
			if len(v) > 0 {
				t.size = max(t.size, v[len(v)-1].id+1)
			}
		}
		b.texts = t
	})
	return b.texts
}

// cosineOf is cosine(loaded, text vector of skill j), summed as cosine sums it.
func (d *denseText) cosineOf(j int) float64 {
	t := d.table
	lo, hi := t.off[j], t.off[j+1]
	ws := t.w[lo:hi]
	var s float64
	for k, id := range t.id[lo:hi] {
		if d.bits[id>>6]&(1<<(id&63)) != 0 {
			s += d.w[id] * ws[k]
		}
	}
	return min(1, s)
}

func (d *denseText) load(v sparse) {
	for _, e := range v {
		d.w[e.id] = e.w
		d.bits[e.id>>6] |= 1 << (e.id & 63)
	}
}

func (d *denseText) unload(v sparse) {
	for _, e := range v {
		d.w[e.id] = 0
		d.bits[e.id>>6] = 0
	}
}

// cosine of two unit vectors whose terms internTerms numbered.
func cosine(a, b sparse) float64 {
	var s float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].id < b[j].id:
			i++
		case a[i].id > b[j].id:
			j++
		default:
			s += a[i].w * b[j].w
			i++
			j++
		}
	}
	return min(1, s)
}

// identifiers calls found with every identifier in text, the way skill and tool names are
// written, leftmost first: runs of ASCII letters and digits, two or more, each joined to the next
// by one '-' or '_' (the matches of identRE in the tests, found without the regexp engine).
func identifiers(text string, found func(string)) {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(text); {
		if !alnum(text[i]) {
			i++
			continue
		}
		start, runs := i, 0
		end := i
		for {
			for i < len(text) && alnum(text[i]) {
				i++
			}
			runs++
			end = i
			if i+1 < len(text) && (text[i] == '-' || text[i] == '_') && alnum(text[i+1]) {
				i++
				continue
			}
			break
		}
		if runs >= 2 {
			found(text[start:end])
		}
	}
}

// mentions returns the ids of the skills named in text, other than self, ascending.
func mentions(text string, index map[string]int, self int) []int {
	seen := map[int]bool{}
	var out []int
	identifiers(text, func(m string) {
		if j, ok := index[m]; ok && j != self && !seen[j] {
			seen[j] = true
			out = append(out, j)
		}
	})
	sort.Ints(out)
	return out
}
