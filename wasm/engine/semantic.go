package engine

import (
	"math"
	"math/bits"
	"runtime"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// Semantic seeding: when the artifact holds skill vectors, the skills closest to the query vector
// form a third ranked list in the seed fusion. The query vector is the request's (an exact
// embedding from the artifact's model) or else the artifact's query encoder applied to the text.
const (
	// DefaultSemanticWeight is the semantic list's weight in the seed fusion, relative to the
	// lexical list's 1, before agreement scales it. Chosen on the SkillsBench, Seal-Tools and
	// ToolLinkOS task sets (docs/evaluation-results.md).
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
	return e.embedTokens(nil, e.analyze(sc, text))
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
	// Room for zeros to a whole triple of skills, which nearest reads as the packed words' lanes.
	out := make([]float32, g.NumSkills(), g.NumSkills()+2)
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
func unit32(v []float64) []float32 { return unitInto(nil, v) }

// unitInto is unit32 written into dst's array when it has room for v (a query's scratch).
func unitInto(dst []float32, v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	out := dst[:0]
	if cap(out) < len(v) {
		out = make([]float32, len(v))
	}
	out = out[:len(v)]
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
// vector q, best first, leaving out skills at cosine ≤ 0. Below LargeLibrary skills the list is
// exact (nearest16 where simdDots is set, else nearest); from LargeLibrary on, only a pool of
// candidates is compared with q: the members of the artifact's vector clusters nearest q
// (clusterLists.probe), at least ClusterPool of them, or without clusters the SemanticPool skills
// a one-bit sketch of every skill ranks highest (see signSketch). At 100,000 skills the clusters
// keep 99.3% of the exact top 50 and the sketch 99%, the sketch at five times the cost
// (docs/benchmarks.md, "semantic prefilter").
func (e *Engine) semanticRanking(sc *scratch, q []float32) []candidate {
	out := sc.sem[:0] // up to semanticDepth+1 entries (offerCosine)
	if cap(out) < semanticDepth+1 {
		out = make([]candidate, 0, semanticDepth+1)
		sc.sem = out
	}
	if runtime.GOARCH == "amd64" && scans16(e.g.NumSkills(), len(q)) {
		return nearest16(e, sc, out, q, semanticDepth)
	}
	if e.lists != nil {
		ids := e.lists.probe(sc, q, ClusterPool)
		if runtime.GOARCH == "amd64" && simdDots != nil && len(q) >= simdMinDim && len(q) < simdSumMax/2 {
			return nearestAmong(e, sc, out, q, ids, semanticDepth)
		}
		for _, i := range ids {
			out = e.offerCosine(out, q, int(i), semanticDepth)
		}
		return out
	}
	if e.signs == nil {
		return e.nearest(sc, out, q, semanticDepth)
	}
	for _, c := range e.signSketch(sc, q, SemanticPool) {
		out = e.offerCosine(out, q, c.id, semanticDepth)
	}
	return out
}

// roundQuery returns the integers q̃ and the scale s by which s·q̃ is closest to q, with
// ‖q − s·q̃‖, the scale as fine as the lanes allow: Σ_j |q̃_j| ≤ ‖q‖₁/s + len(q)/2, kept at
// most laneMax/127, so that no sum over a vector (|x_j| ≤ 127) leaves its lane.
func roundQuery(q []float32) (qi []int64, s, dev float64) {
	for _, x := range q {
		s += math.Abs(float64(x))
	}
	s /= float64(laneMax/127 - (len(q)+1)/2 - 1)
	qi = make([]int64, packStride(len(q))) // zeros to packVectors' stride
	for j, x := range q {
		qi[j] = int64(math.Floor(float64(x)/s + 0.5))
		d := float64(x) - s*float64(qi[j])
		dev += d * d
	}
	return qi, s, math.Sqrt(dev)
}

// laneMax bounds |Σ_j q̃_j·x_j| in one 21-bit lane of a packed word (packVectors).
const laneMax = 1<<20 - 1

// approxBuckets is how finely nearest counts the approximate cosines in [0, 1] to find the k-th
// best: a bucket is much narrower than the rounding error's band.
const approxBuckets = 1024

// packVectors returns the skills' vectors three to a word, for nearest: a word holds
// x_{3t,j} + x_{3t+1,j}·2²¹ + x_{3t+2,j}·2⁴² for the skills of triple t, so that one integer
// multiply by q̃_j and one addition take a product of each of the three skills, and the three
// sums come apart after the last dimension as long as each stays within laneMax. The words go
// in blocks of packBlock triples, dimension by dimension: block b's word for triple 4b+l and
// dimension j is at b·stride·packBlock + j·packBlock + l, so that the scan loads q̃_j once for
// four words. The stride is dim rounded up to a multiple of 2 (the scan's pass); the words past
// dim, and those of the triples past the last skill, are zero. Nil from LargeLibrary skills on
// (the sketch's path), for dimensions too long for a lane and where nearest16 scans instead.
func packVectors(g *graphs.Graph) []int64 {
	dim, n := g.VectorDim(), g.NumSkills()
	if runtime.GOARCH == "amd64" && scans16(n, dim) || dim == 0 || n >= LargeLibrary || laneMax/127-(dim+1)/2 < 2 {
		return nil
	}
	stride := packStride(dim)
	blocks := (n + 3*packBlock - 1) / (3 * packBlock)
	out := make([]int64, blocks*stride*packBlock)
	for i, x := range g.Vectors()[:n*dim] {
		k, j := i/dim, i%dim
		t := k / 3
		out[t/packBlock*stride*packBlock+j*packBlock+t%packBlock] += int64(x) << (21 * (k % 3))
	}
	return out
}

// packBlock is how many triples of skills (packVectors) the scan takes a pass.
const packBlock = 4

// dotsPackedGo is dotsPacked in Go: two dimensions a pass, as the kernel adds.
func dotsPackedGo(w, q, out []int64) {
	stride := len(q) * packBlock
	for b := 0; b*packBlock < len(out); b++ {
		x := w[b*stride : (b+1)*stride : (b+1)*stride]
		var a0, a1, a2, a3 int64
		for j := 0; j+2 <= len(q); j += 2 {
			y, x := q[j:j+2:j+2], x[j*packBlock:j*packBlock+8:j*packBlock+8]
			a0 += x[0]*y[0] + x[4]*y[1]
			a1 += x[1]*y[0] + x[5]*y[1]
			a2 += x[2]*y[0] + x[6]*y[1]
			a3 += x[3]*y[0] + x[7]*y[1]
		}
		out[b*packBlock], out[b*packBlock+1], out[b*packBlock+2], out[b*packBlock+3] = a0, a1, a2, a3
	}
}

// packStride is the dimensions of a packed block: dim rounded up to the scan's two a pass.
func packStride(dim int) int { return (dim + 1) &^ 1 }

// nearest returns the k skills with the highest cosine to the unit query vector q: the list
// offerCosine on every skill makes of out, which is empty.
//
// Computing every cosine exactly was most of a query's time below LargeLibrary skills, and most
// of it went to skills far from the top k. So q is first rounded to s·q̃ with integer q̃_j
// (roundQuery) and q̃·x computed exactly in integers, three skills a multiply (packVectors),
// for every skill. The rounding error e = q − s·q̃ moves a cosine by at most ‖e‖
// (Cauchy–Schwarz, x at unit length), about 0.004 for 128 dimensions, and float32 sums by less
// than 1e-5: only the skills whose approximation is within twice that of the k-th best
// approximation can be among the k best, and only they get their exact cosine. The list is the
// one offerCosine makes (TestNearestExact, TestNearestTightBound, TestNearestLanes).
func (e *Engine) nearest(sc *scratch, out []candidate, q []float32, k int) []candidate {
	n := e.g.NumSkills()
	if e.packed == nil {
		for i := range n {
			out = e.offerCosine(out, q, i, k)
		}
		return out
	}
	qi, scale, dev := roundQuery(q)
	// Whole triples: the approximations of the lanes past the last skill are zero, counted in
	// bucket 0, which no cut reads, and never offered.
	whole := (n + 2) / 3 * 3
	if len(sc.cos) < whole {
		sc.cos = make([]float64, whole)
	}
	if cap(sc.hist) < approxBuckets+1 {
		sc.hist = make([]int32, approxBuckets+1)
	}
	hist := sc.hist[:approxBuckets+1]
	clear(hist)
	// q̃·x for every triple of skills, in the order of the triples: packBlock triples a pass of
	// the kernel (dotsPacked, which WebAssembly runs in a few instructions a product).
	triples := (n + 3*packBlock - 1) / (3 * packBlock) * packBlock
	if cap(sc.sums) < triples {
		sc.sums = make([]int64, triples)
	}
	sums := sc.sums[:triples]
	dotsPacked(e.packed[:len(sums)*len(qi)], qi, sums) // no further than this slicing checks
	// The approximations, scale·(q̃·x)/‖x‖, from the triples' lanes, each sign-extended from 21
	// bits: exact, as every sum is within laneMax and the arithmetic wraps modulo 2⁶⁴; and their
	// buckets. The lanes past the last skill are zero, and so is their approximation. No branch
	// but the loop's: in WebAssembly each taken one goes through the function's block dispatcher
	// (how Go compiles for it), which cost three times the arithmetic.
	invNorm, approx := e.invNorm[:whole], sc.cos[:whole]
	for t, acc := range sums[:whole/3] {
		d0 := acc << 43 >> 43
		acc = (acc - d0) >> 21
		d1 := acc << 43 >> 43
		d2 := (acc - d1) >> 21
		inv, ap := invNorm[3*t:3*t+3:3*t+3], approx[3*t:3*t+3:3*t+3]
		ap[0] = scale * float64(d0) * float64(inv[0]) // 0 for a skill without a vector
		ap[1] = scale * float64(d1) * float64(inv[1])
		ap[2] = scale * float64(d2) * float64(inv[2])
		hist[bucketOf(ap[0])]++
		hist[bucketOf(ap[1])]++
		hist[bucketOf(ap[2])]++
	}
	approx = approx[:n]
	// Every cosine is within slack of its approximation. So when k approximations are at least
	// b/approxBuckets > 0, the k-th best cosine is at least that less slack, and a skill whose
	// approximation is below that less 2·slack cannot reach it; otherwise any skill within slack
	// of a positive cosine can. The skills that pass get their exact cosine, and one sort of them
	// (a few more than k) gives the list offerCosine would: inserting them one by one, each with
	// a binary search and a shift of the list, cost twice the sort.
	cut := cutOf(hist, k, dev+1e-4)
	near := sc.near[:0]
	for i, a := range approx {
		if a >= cut {
			if c := e.cosine(q, i); c > 0 {
				near = append(near, candidate{i, c})
			}
		}
	}
	sc.near = near
	sortCandidates(near)
	return near[:min(k, len(near))]
}

// bucketOf is the bucket of nearest's histogram an approximate cosine a falls in:
// a·approxBuckets rounded toward zero, at least 0 and at most approxBuckets, without a branch.
func bucketOf(a float64) int {
	b := int(a * approxBuckets)
	b &^= b >> 63 // below 0: 0
	over := b - approxBuckets
	return b - over&^(over>>63) // above approxBuckets: approxBuckets
}

// cutOf returns the least approximation a skill must have to be among the k best, with every
// cosine within slack of its approximation: when k approximations are at least b/approxBuckets
// for some b > 0, the greatest such b less 2·slack, else −slack.
func cutOf(hist []int32, k int, slack float64) float64 {
	for b, above := approxBuckets, 0; b > 0; b-- {
		if above += int(hist[b]); above >= k {
			return float64(b)/approxBuckets - 2*slack
		}
	}
	return -slack
}

// offerCosine adds skill i to out, the best k so far with the worst at the end, if its cosine to
// q is positive and good enough.
func (e *Engine) offerCosine(out []candidate, q []float32, i, k int) []candidate {
	s := e.cosine(q, i)
	if s <= 0 {
		return out
	}
	c := candidate{i, s}
	if len(out) == k && !better(c, out[len(out)-1]) {
		return out
	}
	at := search(len(out), func(j int) bool { return better(c, out[j]) })
	if len(out) < k {
		out = append(out, candidate{})
	}
	copy(out[at+1:], out[at:len(out)-1])
	out[at] = c
	return out
}

// cosine is the cosine of skill i's vector to the unit query vector q, 0 for a skill without a
// vector (whose invNorm is 0).
func (e *Engine) cosine(q []float32, i int) float64 {
	dim := e.g.VectorDim()
	row := e.vecs[i*dim : (i+1)*dim : (i+1)*dim]
	q = q[:dim]
	var dot float32
	if cosineKernel {
		dot = dotCosine(row, q) // the loops below in a WebAssembly kernel
	} else {
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
		dot = (d0 + d1) + (d2 + d3)
	}
	return float64(dot * e.invNorm[i])
}

// ClusterPool is how many skills, at least, the vector clusters pass on to the exact cosine: the
// members of the clusters whose centroids are nearest the query, nearest first, until there are
// that many (docs/benchmarks.md, "semantic prefilter").
const ClusterPool = 2000

// clusterLists are the artifact's vector clusters (graphs.Clusters) as member lists.
type clusterLists struct {
	cent    []int8
	inv     []float32 // 1/‖centroid‖, 0 for a zero centroid
	off     []int32   // cluster c's members are members[off[c]:off[c+1]], ascending
	members []int32
}

// newClusterLists returns g's clusters as lists, nil when it has none.
func newClusterLists(g *graphs.Graph) *clusterLists {
	k, dim := g.NumClusters(), g.VectorDim()
	if k == 0 {
		return nil
	}
	l := &clusterLists{cent: g.Centroids(), inv: make([]float32, k), off: make([]int32, k+2)}
	for c := range k {
		var ss float64
		for _, x := range l.cent[c*dim : (c+1)*dim] {
			ss += float64(int(x) * int(x))
		}
		if ss > 0 {
			l.inv[c] = float32(1 / math.Sqrt(ss))
		}
	}
	// Counted one slot on, summed, then filled in skill order advancing each start.
	n := g.NumSkills()
	for i := range n {
		if c := g.ClusterOf(i); c != graphs.NoCluster {
			l.off[c+2]++
		}
	}
	for c := 2; c < len(l.off); c++ {
		l.off[c] += l.off[c-1]
	}
	l.members = make([]int32, l.off[k+1])
	for i := range n {
		if c := g.ClusterOf(i); c != graphs.NoCluster {
			l.members[l.off[c+1]] = int32(i)
			l.off[c+1]++
		}
	}
	l.off = l.off[:k+1]
	return l
}

// probe returns the members of the clusters nearest the unit query vector q, nearest centroid
// first (ties to the lower cluster), until there are at least pool of them or none is left. The
// slice is sc's buffer: valid until the next call with sc.
func (l *clusterLists) probe(sc *scratch, q []float32, pool int) []int32 {
	k, dim := len(l.inv), len(q)
	if cap(sc.cscore) < k {
		sc.cscore, sc.cdots = make([]float32, k), make([]int32, k)
	}
	// The centroids compared in integers, with q rounded to 16-bit lanes (roundQuery16, whose
	// bound keeps every sum within int32): the same order on every host, with the kernel where
	// there is one (a fifth of the float products' time at 100,000 skills) and dotsGo elsewhere.
	score, dots := sc.cscore[:k], sc.cdots[:k]
	qi, _, _ := roundQuery16(sc, q)
	if runtime.GOARCH == "amd64" && simdDots != nil && dim >= simdMinDim {
		simdDots(l.cent, dim, qi, dots)
	} else {
		dotsGo(l.cent, dim, qi, dots)
	}
	for c, d := range dots {
		score[c] = float32(d) * l.inv[c]
	}
	out := sc.probed[:0]
	for len(out) < pool {
		best := -1
		for c, s := range score {
			if s > float32(math.Inf(-1)) && (best < 0 || s > score[best]) {
				best = c
			}
		}
		if best < 0 {
			break
		}
		score[best] = float32(math.Inf(-1))
		out = append(out, l.members[l.off[best]:l.off[best+1]]...)
	}
	sc.probed = out
	return out
}

// SemanticNeighbors returns the ids of the skills semantic seeding ranks for the unit query
// vector q, best first: through the vector clusters or the sign-sketch prefilter in a large
// library, or with exact set, by comparing q with every vector. It is for benchmarks of their
// recall.
func (e *Engine) SemanticNeighbors(q []float32, exact bool) []int {
	var cs []candidate
	if exact && e.g.NumSkills() >= LargeLibrary {
		cs = e.nearest(nil, nil, q, semanticDepth) // no packed vectors: every cosine
	} else {
		sc := e.getScratch()
		defer e.putScratch(sc) // cs lives in the scratch
		cs = e.semanticRanking(sc, q)
	}
	ids := make([]int, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

// LargeLibrary is the library size from which a query takes the large-library path: a pool of
// semantic candidates (the vector clusters, or the sign-sketch prefilter), and the size from
// which the builder makes the clusters.
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
			s := agreement2(x[0], x[1], s0, s1, m0, m1, a0, a1, b0, b1, c0, c1)
			scores[i] = int32(s)
			hist[s]++
			s = agreement2(x[2], x[3], s0, s1, m0, m1, a0, a1, b0, b1, c0, c1)
			scores[i+1] = int32(s)
			hist[s]++
		}
		if i < n {
			s := agreement2(signs[2*i], signs[2*i+1], s0, s1, m0, m1, a0, a1, b0, b1, c0, c1)
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

// agreement2 is signSketch's score of a skill whose sign words are x0 and x1, for a query of
// two words: signs s, mask m and weight planes a, b, c.
func agreement2(x0, x1, s0, s1, m0, m1, a0, a1, b0, b1, c0, c1 uint64) int {
	g0, g1 := ^(x0^s0)&m0, ^(x1^s1)&m1
	return bits.OnesCount64(g0&a0) + bits.OnesCount64(g1&a1) +
		2*(bits.OnesCount64(g0&b0)+bits.OnesCount64(g1&b1)) +
		4*(bits.OnesCount64(g0&c0)+bits.OnesCount64(g1&c1))
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

// The bounded scan with 16-bit query lanes (nearest16), for CPUs that multiply sixteen int8 by
// int16 an instruction. The query is rounded about 100 times more finely than the packed words'
// 21-bit lanes allow: the rounding error ‖e‖ falls from about 0.0034 to 3.5e-5 for the builtin
// model's 128 dimensions, below the float32 allowance of 1e-4, and the histogram that finds the
// k-th best approximation is finer to match. A SkillsBench task text against 1,000 or 10,000
// synthetic skills computes 50.3 exact cosines instead of 56 (its list holds 50).
//
// Only amd64 builds with AVX2 set simdDots (simd_amd64.go), and semanticRanking and packVectors
// read it behind runtime.GOARCH == "amd64", a constant, so WebAssembly compiles none of this.
// It is here rather than in a file of its own because any new file in this package, even one
// holding a constant, moved the module's data by 8 bytes and its gzip size by 1.3 KB, past the
// bar (docs/rationale.md); being portable Go, the tests run it on every platform.

// simdDots, where the CPU has the vector instructions of a kernel (simd_amd64.go sets it at
// init), is dotsGo with them; nil elsewhere, and then semanticRanking never takes nearest16.
var simdDots func(rows []int8, dim int, q []int16, out []int32)

const (
	// simdMinDim is the shortest vector nearest16 scans in production: the kernel reads 16
	// dimensions at a time and never past a row, so shorter rows keep the packed words.
	simdMinDim = 16
	// simdLaneMax bounds |q̃_j|: the int16 lanes, less one for the rounding of a float64 quotient.
	simdLaneMax = 1<<15 - 2
	// simdSumMax bounds Σ_j |q̃_j| so that no dot product with a vector (|x_j| ≤ 128) leaves
	// int32: 128·2²⁴ = 2³¹.
	simdSumMax = 1 << 24
	// simdBuckets is how finely nearest16 counts the approximate cosines in [0, 1]: a bucket of
	// about 2.4e-4, near the width of the band the rounding and float32 sums leave.
	simdBuckets = 4096
)

// scans16 reports whether semanticRanking takes nearest16 for n skills of dim dimensions: with a
// kernel, below LargeLibrary skills (the sketch's path), and for vectors long enough for the
// kernel and short enough for roundQuery16's sums.
func scans16(n, dim int) bool {
	return simdDots != nil && n < LargeLibrary && dim >= simdMinDim && dim < simdSumMax/2
}

// roundQuery16 returns the integers q̃ and the scale s by which s·q̃ is closest to q, with
// ‖q − s·q̃‖, for simdDots: s is the finest by which |q̃_j| ≤ simdLaneMax and
// Σ_j |q̃_j| ≤ ‖q‖₁/s + len(q)/2 < simdSumMax, so that the dot product with a vector of int8
// (|x_j| ≤ 128) is within int32: 128·Σ_j |q̃_j| < 2³¹. The kernel's int32 sums wrap, so the
// bound on the total is all it needs, whatever order it adds in. With sc, q̃ lives in sc.qi
// until the query ends (one allocation a query less, and in WebAssembly less garbage).
func roundQuery16(sc *scratch, q []float32) (qi []int16, s, dev float64) {
	var l1, top float64
	for _, x := range q {
		a := math.Abs(float64(x))
		l1 += a
		top = max(top, a)
	}
	s = max(top/simdLaneMax, l1/float64(simdSumMax-(len(q)+1)/2-1))
	if sc != nil && cap(sc.qi) >= len(q) {
		qi = sc.qi[:len(q)]
	} else {
		qi = make([]int16, len(q))
		if sc != nil {
			sc.qi = qi
		}
	}
	for j, x := range q {
		qi[j] = int16(math.Floor(float64(x)/s + 0.5))
		d := float64(x) - s*float64(qi[j])
		dev += d * d
	}
	return qi, s, math.Sqrt(dev)
}

// nearest16 is nearest with q̃·x computed by simdDots over the vectors in place (no copy of
// them: the packed words are not made): q rounded to 16-bit lanes (roundQuery16), every skill's
// approximate cosine s·q̃·x/‖x‖ counted in simdBuckets buckets (approxGo), and the exact cosine
// (offerCosine) only for skills within twice the slack of the k-th best approximation, by
// nearest's argument. The list, and every cosine in it, is the one offerCosine makes on every
// skill (TestNearestExact, TestNearestTightBound, TestNearestLanes).
func nearest16(e *Engine, sc *scratch, out []candidate, q []float32, k int) []candidate {
	n, dim := e.g.NumSkills(), len(q)
	qi, scale, dev := roundQuery16(sc, q)
	if len(sc.sketch) < n {
		sc.sketch = make([]int32, n)
	}
	dots := sc.sketch[:n] // the sketch's scores are not needed below LargeLibrary skills
	simdDots(e.vecs[:n*dim], dim, qi, dots)
	if len(sc.cos) < n {
		sc.cos = make([]float64, n)
	}
	if cap(sc.hist) < simdBuckets+1 {
		sc.hist = make([]int32, simdBuckets+1)
	}
	hist := sc.hist[:simdBuckets+1]
	clear(hist)
	approx := sc.cos[:n]
	if simdApprox != nil {
		simdApprox(dots, e.invNorm[:n], scale, approx, hist)
	} else {
		approxGo(dots, e.invNorm[:n], scale, approx, hist)
	}
	cut := cut16(hist, dev, k)
	for i, a := range approx {
		if a >= cut {
			out = e.offerCosine(out, q, i, k)
		}
	}
	return out
}

// cut16 is nearest's band over simdBuckets, for nearest16 and nearestAmong: the least
// approximation that can still be among the k best, given the approximations' histogram and
// the rounding error dev. nearest writes it out, as a shared function cost the WebAssembly scan
// 8% in Node (docs/rationale.md); these two run natively only.
func cut16(hist []int32, dev float64, k int) float64 {
	slack := dev + 1e-4
	for b, above := simdBuckets, 0; b > 0; b-- {
		if above += int(hist[b]); above >= k {
			return float64(b)/simdBuckets - 2*slack
		}
	}
	return -slack
}

// nearestAmong is nearest16 over the skills ids only: the list offerCosine makes on each of them,
// with the exact cosine only for those whose approximation (simdDots, a call a skill: the ids
// are scattered) is within twice the slack of the k-th best. For the vector clusters' pool,
// whose exact cosines were most of the semantic seeds' time.
func nearestAmong(e *Engine, sc *scratch, out []candidate, q []float32, ids []int32, k int) []candidate {
	dim := len(q)
	qi, scale, dev := roundQuery16(sc, q)
	if len(sc.sketch) < len(ids) {
		sc.sketch = make([]int32, len(ids))
	}
	if len(sc.cos) < len(ids) {
		sc.cos = make([]float64, len(ids))
	}
	if cap(sc.hist) < simdBuckets+1 {
		sc.hist = make([]int32, simdBuckets+1)
	}
	dots, approx, hist := sc.sketch[:len(ids)], sc.cos[:len(ids)], sc.hist[:simdBuckets+1]
	clear(hist)
	for j, i := range ids {
		simdDots(e.vecs[int(i)*dim:(int(i)+1)*dim], dim, qi, dots[j:j+1])
		a := scale * float64(dots[j]) * float64(e.invNorm[i])
		approx[j] = a
		hist[min(max(int(a*simdBuckets), 0), simdBuckets)]++
	}
	cut := cut16(hist, dev, k)
	for j, a := range approx {
		if a >= cut {
			out = e.offerCosine(out, q, int(ids[j]), k)
		}
	}
	return out
}

// dotsGo sets out[i] to Σ_j q[j]·rows[i·dim+j] for every i < len(out) and j < dim, in int32
// arithmetic that wraps (exact when every total is within int32): simdDots's reference, and its
// path for vectors shorter than simdMinDim.
func dotsGo(rows []int8, dim int, q []int16, out []int32) {
	q = q[:dim]
	for i := range out {
		row := rows[i*dim : (i+1)*dim : (i+1)*dim]
		var d int32
		for j, x := range row {
			d += int32(q[j]) * int32(x)
		}
		out[i] = d
	}
}

// simdApprox, set with simdDots (simd_amd64.go), is approxGo in AVX2, four skills a pass and bit
// for bit the same; nil elsewhere. After the kernel it was nearest16's costliest part: converting and multiplying
// one skill at a time took as long as the dot products.
var simdApprox func(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32)

// approxGo sets approx[i] to the approximate cosine scale·dots[i]·invNorm[i] (0 for a skill
// without a vector) for every i < len(dots), and counts it in hist: bucket
// min(max(int(approx[i]·B), 0), B) of B+1 = len(hist), the last for approximations of 1 and
// more, the first for those below 1/B. simdApprox's reference, and nearest16's path without it.
func approxGo(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32) {
	top := len(hist) - 1
	invNorm, approx = invNorm[:len(dots)], approx[:len(dots)]
	for i, d := range dots {
		a := scale * float64(d) * float64(invNorm[i])
		approx[i] = a
		hist[min(max(int(a*float64(top)), 0), top)]++
	}
}
