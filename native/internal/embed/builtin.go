package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/caskg/caskg/wasm/engine"
)

// Defaults of BuiltinOptions.
const (
	defaultBuiltinDim = 128
	// builtinOversample and builtinPowerIters set the randomized SVD's accuracy (Halko,
	// Martinsson and Tropp 2011): a few extra directions and power iterations make the leading
	// singular vectors near exact for term-document matrices, whose spectrum decays slowly.
	builtinOversample = 16
	builtinPowerIters = 3
	builtinSeed       = 0x636173_6b67 // "caskg": the random projection is fixed, the model deterministic
)

// BuiltinOptions configure NewBuiltin. Zero values take the defaults.
type BuiltinOptions struct {
	Dim int // dimensions kept; default 128 (defaultBuiltinDim), at most the rank of the term-document matrix
}

// Builtin is latent semantic analysis learned from a library: each text is a TF-IDF vector over
// the engine's terms (engine.QueryTerms weights, so 1 + ln tf, times IDF), and the model keeps
// the top singular directions of the term-document matrix. A term's vector is its row of U_k;
// a text's vector is the normalized IDF-weighted sum of its terms' vectors, which is the text's
// TF-IDF vector projected onto the latent space. Because that is exactly the query encoder's
// formula, the artifact's encoder is the model itself.
type Builtin struct {
	id    string
	dim   int
	terms []string  // sorted
	idf   []float64 // per term
	vecs  []float64 // len(terms)·dim, row-major
}

// NewBuiltin learns the model from texts (one per skill). The same texts, in any order, and
// options always give the same model.
func NewBuiltin(texts []string, opt BuiltinOptions) (*Builtin, error) {
	parallelGonum()
	texts = slices.Clone(texts)
	slices.Sort(texts) // the random projection pairs rows with texts: fix their order
	if opt.Dim == 0 {
		opt.Dim = defaultBuiltinDim
	}
	if opt.Dim < 1 {
		return nil, fmt.Errorf("embed: builtin dimension %d must be at least 1", opt.Dim)
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("embed: the builtin model needs at least one text to learn from")
	}
	x := newTermDoc(texts)
	if len(x.terms) == 0 {
		return nil, fmt.Errorf("embed: the builtin model found no terms in %d texts", len(texts))
	}
	nt, n := len(x.terms), len(x.cols)
	k := min(opt.Dim, nt, n)
	u, vals, err := x.leftSingular(min(k+builtinOversample, nt, n))
	if err != nil {
		return nil, err
	}
	for k > 1 && vals[k-1] <= vals[0]*1e-10 {
		k-- // directions the texts do not span carry only rounding noise
	}
	m := &Builtin{dim: k, terms: x.terms, idf: x.idf, vecs: signFixed(u, k)}
	m.id = m.hashID()
	return m, nil
}

// termWeight is one entry of a sparse column of the term-document matrix.
type termWeight struct {
	term int
	x    float64
}

// termDoc is the term-document matrix X of a set of texts: a column per text, its TF-IDF
// vector at unit length, over the terms in sorted order.
type termDoc struct {
	terms []string       // sorted
	idf   []float64      // per term
	cols  [][]termWeight // per text, sorted by term
}

// newTermDoc builds X from texts. It has no terms when no text has one.
func newTermDoc(texts []string) *termDoc {
	index := map[string]int{}
	var terms []string
	df := []int{}
	docs := make([][]termWeight, len(texts))
	// Texts are tokenized in parallel a block at a time, and their terms numbered in text order.
	const block = 4096
	tokens := make([][]string, min(block, len(texts)))
	weights := make([][]float64, len(tokens))
	for lo := 0; lo < len(texts); lo += block {
		hi := min(len(texts), lo+block)
		parallelRanges(hi-lo, func(p int) { tokens[p], weights[p] = engine.QueryTerms(texts[lo+p]) })
		for d := lo; d < hi; d++ {
			ts, ws := tokens[d-lo], weights[d-lo]
			docs[d] = make([]termWeight, 0, len(ts))
			for i, t := range ts {
				k, ok := index[t]
				if !ok {
					k = len(terms)
					index[t] = k
					terms = append(terms, t)
					df = append(df, 0)
				}
				df[k]++
				docs[d] = append(docs[d], termWeight{k, ws[i]})
			}
		}
	}
	// Renumber terms in sorted order so that nothing depends on the order texts came in.
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return terms[order[a]] < terms[order[b]] })
	rank := make([]int, len(terms))
	sorted := make([]string, len(terms))
	for r, k := range order {
		rank[k], sorted[r] = r, terms[k]
	}
	n, nt := len(texts), len(terms)
	idf := make([]float64, nt)
	for k, c := range df {
		idf[rank[k]] = math.Log(float64(1+n)/float64(1+c)) + 1
	}
	cols := make([][]termWeight, n)
	for d, es := range docs {
		col := make([]termWeight, len(es))
		var ss float64
		for i, e := range es {
			x := e.x * idf[rank[e.term]]
			col[i] = termWeight{rank[e.term], x}
			ss += x * x
		}
		if ss > 0 {
			inv := 1 / math.Sqrt(ss)
			for i := range col {
				col[i].x *= inv
			}
		}
		slices.SortFunc(col, func(a, b termWeight) int { return a.term - b.term })
		cols[d] = col
	}
	return &termDoc{terms: sorted, idf: idf, cols: cols}
}

// mul returns X · z (T×l), z being N×l, both row-major. Workers own ranges of terms, and each
// adds its terms' products in document order, as one loop over the documents would.
func (x *termDoc) mul(z []float64, l int) []float64 {
	nt := len(x.terms)
	y := make([]float64, nt*l)
	parts := 4 * runtime.GOMAXPROCS(0)
	parallelRanges(parts, func(p int) {
		lo, hi := p*nt/parts, (p+1)*nt/parts
		for d, col := range x.cols {
			zd := z[d*l : (d+1)*l]
			k, _ := slices.BinarySearchFunc(col, lo, func(e termWeight, t int) int { return e.term - t })
			for _, e := range col[k:] {
				if e.term >= hi {
					break
				}
				blas64.Implementation().Daxpy(l, e.x, zd, 1, y[e.term*l:(e.term+1)*l], 1)
			}
		}
	})
	return y
}

// mulT returns Xᵀ · q (N×l), q being T×l, both row-major. Documents are independent.
func (x *termDoc) mulT(q []float64, l int) []float64 {
	n := len(x.cols)
	z := make([]float64, n*l)
	parts := 4 * runtime.GOMAXPROCS(0)
	parallelRanges(parts, func(p int) {
		for d := p * n / parts; d < (p+1)*n/parts; d++ {
			zd := z[d*l : (d+1)*l]
			for _, e := range x.cols[d] {
				blas64.Implementation().Daxpy(l, e.x, q[e.term*l:(e.term+1)*l], 1, zd, 1)
			}
		}
	})
	return z
}

// parallelRanges calls f(p) for every p in [0, parts) on a worker per core.
func parallelRanges(parts int, f func(p int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(parts, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1)) - 1; p < parts; p = int(next.Add(1)) - 1 {
				f(p)
			}
		}()
	}
	wg.Wait()
}

// leftSingular approximates X's top l left singular vectors (U, T×l) and its singular values,
// largest first, by a randomized SVD with a fixed seed.
func (x *termDoc) leftSingular(l int) (*mat.Dense, []float64, error) {
	nt, n := len(x.terms), len(x.cols)
	// Randomized range finder: Q spans X·Ω, refined by power iterations (X·Xᵀ)^q.
	rng := rand.New(rand.NewPCG(builtinSeed, builtinSeed))
	omega := make([]float64, n*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	q := orthonormalize(x.mul(omega, l), nt, l)
	for range builtinPowerIters {
		z := orthonormalize(x.mulT(q, l), n, l)
		q = orthonormalize(x.mul(z, l), nt, l)
	}
	// B = Qᵀ X is small (l×N); its SVD B = Ub·Σ·Vᵀ gives U ≈ Q·Ub.
	bt := x.mulT(q, l) // Bᵀ, N×l
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, l, bt).T(), mat.SVDThin) {
		return nil, nil, fmt.Errorf("embed: the builtin model's SVD did not converge")
	}
	var ub mat.Dense
	svd.UTo(&ub) // l×min(l, N)
	u := mat.NewDense(nt, l, nil)
	u.Mul(mat.NewDense(nt, l, q), ub.Slice(0, l, 0, l))
	return u, svd.Values(nil), nil
}

// signFixed returns the first k columns of u row-major, each direction's sign fixed (largest
// component positive), so that the model does not depend on the SVD routine's sign convention.
func signFixed(u *mat.Dense, k int) []float64 {
	nt, _ := u.Dims()
	vecs := make([]float64, nt*k)
	for j := range k {
		best := 0.0
		for t := range nt {
			if x := u.At(t, j); math.Abs(x) > math.Abs(best) {
				best = x
			}
		}
		sign := 1.0
		if best < 0 {
			sign = -1
		}
		for t := range nt {
			vecs[t*k+j] = sign * u.At(t, j)
		}
	}
	return vecs
}

// hashID names the model by its dimension and a hash of its terms, weights and vectors (as
// float32, what Embed's callers see).
func (m *Builtin) hashID() string {
	k := m.dim
	h := sha256.New()
	var buf [8]byte
	for t, term := range m.terms {
		h.Write([]byte(term))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(m.idf[t]))
		h.Write(buf[:])
		for _, x := range m.vecs[t*k : (t+1)*k] {
			binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(float32(x)))
			h.Write(buf[:4])
		}
	}
	return fmt.Sprintf("builtin-lsa-v1:%d:%s", k, hex.EncodeToString(h.Sum(nil))[:16])
}

// orthonormalize replaces the r×c row-major matrix a (r ≥ c) by an orthonormal basis of its
// column space (a thin Householder QR), and returns it.
func orthonormalize(a []float64, r, c int) []float64 {
	g := blas64.General{Rows: r, Cols: c, Stride: c, Data: a}
	tau := make([]float64, c)
	work := []float64{0}
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, max(1, int(work[0])))
	lapack64.Geqrf(g, tau, work, len(work))
	work = []float64{0}
	lapack64.Orgqr(g, tau, work, -1)
	work = make([]float64, max(1, int(work[0])))
	lapack64.Orgqr(g, tau, work, len(work))
	return a
}

// ID names the model: its dimension and a hash of its terms, weights and vectors.
func (m *Builtin) ID() string { return m.id }

// Dim is the number of latent dimensions.
func (m *Builtin) Dim() int { return m.dim }

// Embed returns the texts' vectors; a text with no term of the model's vocabulary gets the zero
// vector. It never fails except for a cancelled ctx.
func (m *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	// Texts are independent: workers take blocks of them.
	const block = 256
	parallelRanges((len(texts)+block-1)/block, func(p int) {
		if ctx.Err() != nil {
			return
		}
		acc := make([]float64, m.dim)
		for i := p * block; i < min(len(texts), (p+1)*block); i++ {
			out[i] = m.embed(texts[i], acc)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// embed is the vector of one text; acc is scratch space of m.dim values.
func (m *Builtin) embed(text string, acc []float64) []float32 {
	clear(acc)
	ts, ws := engine.QueryTerms(text)
	for j, t := range ts {
		k, ok := slices.BinarySearch(m.terms, t)
		if !ok {
			continue
		}
		f := ws[j] * m.idf[k]
		for d, x := range m.vecs[k*m.dim : (k+1)*m.dim] {
			acc[d] += f * x
		}
	}
	v := make([]float32, m.dim)
	for d, x := range acc {
		v[d] = float32(x)
	}
	normalize(v)
	return v
}

// QueryEncoder returns the model as a term table: terms sorted, weights the IDF, vectors the
// terms' latent vectors.
func (m *Builtin) QueryEncoder() (terms []string, weights []float32, vecs [][]float32) {
	terms = slices.Clone(m.terms)
	weights = make([]float32, len(terms))
	vecs = make([][]float32, len(terms))
	for t := range terms {
		weights[t] = float32(m.idf[t])
		v := make([]float32, m.dim)
		for d, x := range m.vecs[t*m.dim : (t+1)*m.dim] {
			v[d] = float32(x)
		}
		vecs[t] = v
	}
	return terms, weights, vecs
}
