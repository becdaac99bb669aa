package engine

import (
	"math"
	"math/bits"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// Semantic seeding: when the artifact holds skill vectors, the skills closest to
// the query vector form a third ranked list in the seed fusion. The query vector is the one the
// request carries (an exact embedding from the artifact's model) or else the artifact's query
// encoder applied to the query text.
const (
	// DefaultSemanticWeight is the semantic list's weight in the seed fusion, relative to the
	// lexical list's 1, before agreement scales it. Chosen on the SkillsBench, Seal-Tools and
	// ToolLinkOS task sets (EVALUATION.md).
	DefaultSemanticWeight = 0.25
	// semanticDepth is how many of the closest skills the semantic list holds: deeper entries
	// add little rank mass and would only pad the candidate list.
	semanticDepth = 50
)

// QueryTerms returns the distinct terms of text (engine.Tokenize) in order of first occurrence
// with their query-side weight 1 + ln(count). The query encoder and the builder's models weigh
// terms this way, so an encoder embeds a text exactly as the model it was made from does.
func QueryTerms(text string) (terms []string, weights []float64) {
	counts := map[string]int{}
	for _, t := range Tokenize(text) {
		if counts[t] == 0 {
			terms = append(terms, t)
		}
		counts[t]++
	}
	weights = make([]float64, len(terms))
	for i, t := range terms {
		weights[i] = 1 + math.Log(float64(counts[t]))
	}
	return terms, weights
}

// Embed returns the query vector the artifact's query encoder gives text: unit length, of the
// dimension of the skill vectors. It returns nil when the artifact has no encoder or none of
// the text's terms is in the encoder's vocabulary.
func (e *Engine) Embed(text string) []float32 {
	sc := e.getScratch()
	defer e.putScratch(sc)
	return e.embedTokens(e.analyze(sc, text))
}

// VectorDim is the dimension of the artifact's skill vectors (and of Request.Vector); 0 when the
// artifact has none.
func (e *Engine) VectorDim() int { return e.g.VectorDim() }

// VectorModel is the id of the embedder that made the artifact's skill vectors.
func (e *Engine) VectorModel() string { return e.g.VectorModel() }

// vectorNorms returns 1/‖row‖ of every quantized skill vector (0 for a zero vector), so that
// ranking computes true cosines whatever the quantization did to the lengths.
func vectorNorms(g *graphs.Graph) []float32 {
	if g.VectorDim() == 0 {
		return nil
	}
	out := make([]float32, g.NumSkills())
	for i := range out {
		row, scale := g.Vector(i)
		var ss float64
		for _, x := range row {
			ss += float64(x) * float64(x)
		}
		if ss > 0 && scale > 0 {
			out[i] = float32(1 / math.Sqrt(ss))
		}
	}
	return out
}

// unit32 returns v scaled to unit length as float32, or nil for a zero vector.
func unit32(v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for j, x := range v {
		out[j] = float32(x * inv)
	}
	return out
}

// checkVector validates a request's exact query vector against the artifact and returns it at
// unit length.
func (e *Engine) checkVector(v []float32) ([]float32, error) {
	dim := e.g.VectorDim()
	if dim == 0 {
		return nil, errtext.New("engine: field \"vector\": the artifact has no skill vectors to compare it with")
	}
	if len(v) != dim {
		return nil, errtext.New("engine: field \"vector\": " + errtext.Itoa(len(v)) + " dimensions, the artifact's vectors (" + e.g.VectorModel() + ") have " + errtext.Itoa(dim))
	}
	acc := make([]float64, dim)
	for j, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errtext.New("engine: field \"vector\": component " + errtext.Itoa(j) + " is " + errtext.Ftoa(x))
		}
		acc[j] = float64(x)
	}
	u := unit32(acc)
	if u == nil {
		return nil, errtext.New("engine: field \"vector\": the zero vector has no direction")
	}
	return u, nil
}

// semanticRanking returns the semanticDepth skills with the highest cosine to the unit query
// vector q, best first, leaving out skills at cosine ≤ 0. Below LargeLibrary skills every
// vector is compared with q; from LargeLibrary on, only the SemanticPool skills a one-bit sketch
// ranks highest (see signSketch) are, which costs a sixth as much at 100,000 skills and keeps
// about 98% of the exact top 50 (BENCHMARKS.md, "semantic prefilter").
func (e *Engine) semanticRanking(sc *scratch, q []float32) []candidate {
	g := e.g
	out := make([]candidate, 0, min(g.NumSkills(), semanticDepth+1))
	if e.signs != nil {
		for _, c := range e.signSketch(sc, q, SemanticPool) {
			out = e.offerCosine(out, q, c.id)
		}
		return out
	}
	if e.vecs32 == nil {
		for i := range g.NumSkills() {
			out = e.offerCosine(out, q, i)
		}
		return out
	}
	// Two skills a pass, each summed exactly as offerCosine sums it: the same cosines, with
	// twice the independent additions in flight (each skill's four sums are chains of dim/4
	// dependent additions).
	// The cosines go to a buffer and the best semanticDepth positive ones are selected from it
	// as BM25's are (offerPositive): the list offerCosine keeps, without a comparison and an
	// insertion per skill. A skill without a vector (invNorm 0) has cosine 0 and is left out.
	dim, n := len(q), g.NumSkills()
	vs, invNorm := e.vecs32[:n*dim], e.invNorm[:n]
	if len(sc.cos) < n {
		sc.cos = make([]float64, n)
	}
	cos := sc.cos[:n]
	i := 0
	for ; i+2 <= n; i += 2 {
		var acc [8]float32
		dotPart(&acc, q, vs[i*dim:(i+1)*dim], vs[(i+1)*dim:(i+2)*dim])
		c := cos[i : i+2 : i+2]
		c[0] = float64(((acc[0] + acc[1]) + (acc[2] + acc[3])) * invNorm[i])
		c[1] = float64(((acc[4] + acc[5]) + (acc[6] + acc[7])) * invNorm[i+1])
	}
	if i < n {
		var acc [8]float32
		a := vs[i*dim : (i+1)*dim]
		dotPart(&acc, q, a, a)
		cos[i] = float64(((acc[0] + acc[1]) + (acc[2] + acc[3])) * invNorm[i])
	}
	// offerPositive reads the scores' bits as integers: -0 and negative cosines must not be
	// there, and no score is NaN (the query and vectors are finite).
	for j, c := range cos {
		if c <= 0 {
			cos[j] = 0
		}
	}
	top := topCandidates{k: semanticDepth, h: out}
	top.offerPositive(cos)
	return top.sorted()
}

// dotPart adds q·a to the sums acc[0:4] and q·b to acc[4:8] (all of q's length), as
// offerCosine sums q·x: sixteen products a pass into four sums by index mod 4, then four a pass,
// then the rest into the first; offerDot takes (s0+s1)+(s2+s3).
func dotPart(acc *[8]float32, q, a, b []float32) {
	a, b = a[:len(q)], b[:len(q)]
	a0, a1, a2, a3, b0, b1, b2, b3 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	j := 0
	for ; j+16 <= len(q); j += 16 {
		x, r, s := q[j:j+16:j+16], a[j:j+16:j+16], b[j:j+16:j+16]
		a0 += x[0] * r[0]
		b0 += x[0] * s[0]
		a1 += x[1] * r[1]
		b1 += x[1] * s[1]
		a2 += x[2] * r[2]
		b2 += x[2] * s[2]
		a3 += x[3] * r[3]
		b3 += x[3] * s[3]
		a0 += x[4] * r[4]
		b0 += x[4] * s[4]
		a1 += x[5] * r[5]
		b1 += x[5] * s[5]
		a2 += x[6] * r[6]
		b2 += x[6] * s[6]
		a3 += x[7] * r[7]
		b3 += x[7] * s[7]
		a0 += x[8] * r[8]
		b0 += x[8] * s[8]
		a1 += x[9] * r[9]
		b1 += x[9] * s[9]
		a2 += x[10] * r[10]
		b2 += x[10] * s[10]
		a3 += x[11] * r[11]
		b3 += x[11] * s[11]
		a0 += x[12] * r[12]
		b0 += x[12] * s[12]
		a1 += x[13] * r[13]
		b1 += x[13] * s[13]
		a2 += x[14] * r[14]
		b2 += x[14] * s[14]
		a3 += x[15] * r[15]
		b3 += x[15] * s[15]
	}
	for ; j+4 <= len(q); j += 4 {
		x, r, s := q[j:j+4:j+4], a[j:j+4:j+4], b[j:j+4:j+4]
		a0 += x[0] * r[0]
		b0 += x[0] * s[0]
		a1 += x[1] * r[1]
		b1 += x[1] * s[1]
		a2 += x[2] * r[2]
		b2 += x[2] * s[2]
		a3 += x[3] * r[3]
		b3 += x[3] * s[3]
	}
	for ; j < len(q); j++ {
		a0 += q[j] * a[j]
		b0 += q[j] * b[j]
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7] = a0, a1, a2, a3, b0, b1, b2, b3
}

// vectors32 returns every skill's quantized vector as float32 (exactly: int8 values are
// float32 values), so the exact scan converts nothing; nil from LargeLibrary skills on, where
// the prefilter compares a few thousand vectors and the copy would be tens of megabytes.
func vectors32(g *graphs.Graph) []float32 {
	if g.VectorDim() == 0 || g.NumSkills() >= LargeLibrary {
		return nil
	}
	vs := g.Vectors()
	out := make([]float32, len(vs))
	for i, x := range vs {
		out[i] = float32(x)
	}
	return out
}

// offerCosine adds skill i to out, the best semanticDepth so far with the worst at the end, if
// its cosine to q is positive and good enough.
func (e *Engine) offerCosine(out []candidate, q []float32, i int) []candidate {
	if e.invNorm[i] == 0 {
		return out
	}
	dim := e.g.VectorDim()
	row := e.vecs[i*dim : (i+1)*dim : (i+1)*dim]
	q = q[:dim]
	var d0, d1, d2, d3 float32
	j := 0
	for ; j+16 <= len(row); j += 16 {
		// Sixteen products a pass, each added to the accumulator of its index mod 4 in index
		// order: the same sums as four a pass, with a quarter of the loop overhead.
		r, x := row[j:j+16:j+16], q[j:j+16:j+16]
		d0 += x[0] * float32(r[0])
		d1 += x[1] * float32(r[1])
		d2 += x[2] * float32(r[2])
		d3 += x[3] * float32(r[3])
		d0 += x[4] * float32(r[4])
		d1 += x[5] * float32(r[5])
		d2 += x[6] * float32(r[6])
		d3 += x[7] * float32(r[7])
		d0 += x[8] * float32(r[8])
		d1 += x[9] * float32(r[9])
		d2 += x[10] * float32(r[10])
		d3 += x[11] * float32(r[11])
		d0 += x[12] * float32(r[12])
		d1 += x[13] * float32(r[13])
		d2 += x[14] * float32(r[14])
		d3 += x[15] * float32(r[15])
	}
	for ; j+4 <= len(row); j += 4 {
		r, x := row[j:j+4:j+4], q[j:j+4:j+4] // one bounds check for four products
		d0 += x[0] * float32(r[0])
		d1 += x[1] * float32(r[1])
		d2 += x[2] * float32(r[2])
		d3 += x[3] * float32(r[3])
	}
	for ; j < len(row); j++ {
		d0 += q[j] * float32(row[j])
	}
	return e.offerDot(out, i, (d0+d1)+(d2+d3))
}

// offerDot is offerCosine for skill i whose vector's dot product with q is dot.
func (e *Engine) offerDot(out []candidate, i int, dot float32) []candidate {
	if e.invNorm[i] == 0 {
		return out
	}
	s := float64(dot * e.invNorm[i])
	if s <= 0 {
		return out
	}
	c := candidate{i, s}
	if len(out) == semanticDepth && !better(c, out[len(out)-1]) {
		return out
	}
	k := search(len(out), func(k int) bool { return better(c, out[k]) })
	if len(out) < semanticDepth {
		out = append(out, candidate{})
	}
	copy(out[k+1:], out[k:len(out)-1])
	out[k] = c
	return out
}

// SemanticNeighbors returns the ids of the skills semantic seeding ranks for the unit query
// vector q, best first: through the sign-sketch prefilter in a large library, or with exact set,
// by comparing q with every vector. It is for benchmarks of the prefilter's recall.
func (e *Engine) SemanticNeighbors(q []float32, exact bool) []int {
	var cs []candidate
	if exact && e.signs != nil {
		for i := range e.g.NumSkills() {
			cs = e.offerCosine(cs, q, i)
		}
	} else {
		sc := e.getScratch()
		cs = e.semanticRanking(sc, q)
		e.putScratch(sc)
	}
	ids := make([]int, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

// LargeLibrary is the library size from which a query takes the large-library path: the
// sign-sketch prefilter for semantic seeds.
const LargeLibrary = 20000

// SemanticPool is how many skills the sign sketch passes on to the exact cosine in a large
// library.
const SemanticPool = 4000

// vectorSigns returns, for every skill, the sign bits of its vector (bit j set when component j
// is positive), in words of 64 bits.
func vectorSigns(g *graphs.Graph) []uint64 {
	dim := g.VectorDim()
	if dim == 0 {
		return nil
	}
	words := (dim + 63) / 64
	out := make([]uint64, g.NumSkills()*words)
	for i := range g.NumSkills() {
		row, _ := g.Vector(i)
		w := out[i*words : (i+1)*words]
		for j, x := range row {
			if x > 0 {
				w[j/64] |= 1 << (j % 64)
			}
		}
	}
	return out
}

// sketchLevels is how finely signSketch weighs the query's components: |q_j| is rounded to
// 0..sketchLevels (three bit planes).
const sketchLevels = 7

// signSketch returns the pool skills (with a non-zero vector) whose sign bits agree best with q,
// each agreement weighted by |q_j|: the asymmetric one-bit estimate Σ_j q_j·sign(x_j) up to a
// constant, with |q_j| rounded to sketchLevels levels so that it is integer arithmetic — a few
// XORs and popcounts per skill, and the same answer on every host. Ties go to the lower id.
// The slice is sc's buffer: valid until the next call with sc.
func (e *Engine) signSketch(sc *scratch, q []float32, pool int) []candidate {
	dim := len(q)
	words := (dim + 63) / 64
	var top float32
	for _, x := range q {
		if x < 0 {
			x = -x
		}
		if x > top {
			top = x
		}
	}
	// The query's signs, its weight planes and the mask of real dimensions, word by word.
	qs := make([]uint64, 5*words)
	sign, p0, p1, p2, mask := qs[:words], qs[words:2*words], qs[2*words:3*words], qs[3*words:4*words], qs[4*words:]
	for j, x := range q {
		w, bit := j/64, uint64(1)<<(j%64)
		mask[w] |= bit
		if x > 0 {
			sign[w] |= bit
		}
		level := 0
		if top > 0 {
			a := x
			if a < 0 {
				a = -a
			}
			level = int(a/top*sketchLevels + 0.5)
		}
		if level&1 != 0 {
			p0[w] |= bit
		}
		if level&2 != 0 {
			p1[w] |= bit
		}
		if level&4 != 0 {
			p2[w] |= bit
		}
	}
	n := e.g.NumSkills()
	if len(sc.sketch) < n {
		sc.sketch = make([]int32, n)
	}
	scores := sc.sketch[:n]
	if cap(sc.hist) < sketchLevels*dim+1 {
		sc.hist = make([]int32, sketchLevels*dim+1)
	}
	hist := sc.hist[:sketchLevels*dim+1]
	clear(hist)
	eligible := 0
	invNorm := e.invNorm[:n]
	if words == 2 {
		// Up to 128 dimensions (the builtin model's), with the query's words in locals: no
		// inner loop and no bounds checks, which in WebAssembly halved the scan.
		s0, s1, m0, m1 := sign[0], sign[1], mask[0], mask[1]
		a0, a1, b0, b1, c0, c1 := p0[0], p0[1], p1[0], p1[1], p2[0], p2[1]
		// Two skills a pass: half the loop's own branches.
		signs := e.signs[:2*n]
		i := 0
		for ; i+2 <= n; i += 2 {
			x := signs[2*i : 2*i+4 : 2*i+4]
			g0, g1 := ^(x[0]^s0)&m0, ^(x[1]^s1)&m1
			s := bits.OnesCount64(g0&a0) + bits.OnesCount64(g1&a1) +
				2*(bits.OnesCount64(g0&b0)+bits.OnesCount64(g1&b1)) +
				4*(bits.OnesCount64(g0&c0)+bits.OnesCount64(g1&c1))
			scores[i] = int32(s)
			hist[s]++
			g0, g1 = ^(x[2]^s0)&m0, ^(x[3]^s1)&m1
			s = bits.OnesCount64(g0&a0) + bits.OnesCount64(g1&a1) +
				2*(bits.OnesCount64(g0&b0)+bits.OnesCount64(g1&b1)) +
				4*(bits.OnesCount64(g0&c0)+bits.OnesCount64(g1&c1))
			scores[i+1] = int32(s)
			hist[s]++
		}
		if i < n {
			x := signs[2*i : 2*i+2 : 2*i+2]
			g0, g1 := ^(x[0]^s0)&m0, ^(x[1]^s1)&m1
			s := bits.OnesCount64(g0&a0) + bits.OnesCount64(g1&a1) +
				2*(bits.OnesCount64(g0&b0)+bits.OnesCount64(g1&b1)) +
				4*(bits.OnesCount64(g0&c0)+bits.OnesCount64(g1&c1))
			scores[i] = int32(s)
			hist[s]++
		}
		// Skills without a vector were scored like the others (one branch less a skill) and
		// are taken out here.
		eligible = n - len(e.zeroVec)
		for _, i := range e.zeroVec {
			hist[scores[i]]--
			scores[i] = -1
		}
	} else {
		for i := range n {
			if invNorm[i] == 0 {
				scores[i] = -1
				continue
			}
			var s int
			xs := e.signs[i*words : (i+1)*words]
			for w, x := range xs {
				agree := ^(x ^ sign[w]) & mask[w]
				s += bits.OnesCount64(agree&p0[w]) + 2*bits.OnesCount64(agree&p1[w]) + 4*bits.OnesCount64(agree&p2[w])
			}
			scores[i] = int32(s)
			hist[s]++
			eligible++
		}
	}
	// The pool: every score above the boundary score b, then the lowest ids at b.
	out := sc.pool[:0]
	defer func() { sc.pool = out[:0] }()
	b, above := len(hist)-1, 0
	for ; b > 0 && above+int(hist[b]) < pool; b-- {
		above += int(hist[b])
	}
	atB := int32(pool - above)
	// Four skills a pass, with one branch for the four unless one of them reaches b.
	b32, i := int32(b), 0
	for ; i+4 <= n; i += 4 {
		q := scores[i : i+4 : i+4]
		if b2i(q[0] >= b32)|b2i(q[1] >= b32)|b2i(q[2] >= b32)|b2i(q[3] >= b32) != 0 {
			out, atB = poolOf(out, q, i, b32, atB)
		}
	}
	out, _ = poolOf(out, scores[i:], i, b32, atB)
	return out
}

// poolOf appends to out the skills of scores (skill first onwards) above b, and those at b
// while atB lasts, and returns out and what is left of atB.
func poolOf(out []candidate, scores []int32, first int, b, atB int32) ([]candidate, int32) {
	for j, s := range scores {
		switch {
		case s > b:
			out = append(out, candidate{first + j, float64(s)})
		case s == b && s >= 0 && atB > 0:
			out = append(out, candidate{first + j, float64(s)})
			atB--
		}
	}
	return out, atB
}

// better orders candidates by score descending, then id ascending.
func better(a, b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}
