package graphs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/errtext"
)

// Vectors are the skill embeddings of an Artifact (format 1.1), quantized to int8 with one
// scale per skill: skill i's vector is Scale[i]·Data[i·Dim : (i+1)·Dim].
type Vectors struct {
	Model string    // id of the embedder that made them (hosts passing exact query vectors must use it)
	Dim   int       // in [1, MaxDim]
	Scale []float32 // one per skill, finite and ≥ 0
	Data  []int8    // len(Skills)·Dim values in [-127, 127]
}

// QueryEncoder is a term → vector table that embeds a query without a model runtime (format
// 1.1): the query vector is the L2-normalized sum over the query's distinct terms t of
// (1 + ln count(t))·Weight[t]·Scale[t]·Data[t·Dim : (t+1)·Dim].
type QueryEncoder struct {
	Dim    int       // equal to the Vectors' Dim
	Terms  []string  // strictly ascending byte order, as engine.Tokenize produces them
	Weight []float32 // one per term, finite and ≥ 0
	Scale  []float32 // one per term, finite and ≥ 0
	Data   []int8    // len(Terms)·Dim values in [-127, 127]
}

// Quantize writes v into dst (len(dst) == len(v)) as int8 in [-127, 127] and returns the
// scale that restores it: v[j] ≈ scale·dst[j]. A zero vector gets scale 0. Non-finite values
// are treated as 0.
func Quantize(v []float32, dst []int8) float32 {
	var m float64
	for _, x := range v {
		if a := math.Abs(float64(x)); a > m && !math.IsInf(a, 0) {
			m = a
		}
	}
	if m == 0 || math.IsNaN(m) {
		clear(dst)
		return 0
	}
	scale := m / 127
	for j, x := range v {
		q := math.Round(float64(x) / scale)
		if math.IsNaN(q) || math.IsInf(q, 0) {
			q = 0
		}
		dst[j] = int8(max(-127, min(127, q)))
	}
	return float32(scale)
}

// NewVectors quantizes one vector per skill, all of one dimension.
func NewVectors(model string, vecs [][]float32) (*Vectors, error) {
	dim := 0
	if len(vecs) > 0 {
		dim = len(vecs[0])
	}
	if dim < 1 || dim > MaxDim {
		return nil, errors.New("graphs: vector dimension " + errtext.Itoa(dim) + " outside [1, " + errtext.Itoa(MaxDim) + "]")
	}
	v := &Vectors{Model: model, Dim: dim, Scale: make([]float32, len(vecs)), Data: make([]int8, len(vecs)*dim)}
	for i, x := range vecs {
		if len(x) != dim {
			return nil, errors.New("graphs: vector " + errtext.Itoa(i) + " has dimension " + errtext.Itoa(len(x)) + ", the first has " + errtext.Itoa(dim))
		}
		v.Scale[i] = Quantize(x, v.Data[i*dim:(i+1)*dim])
	}
	return v, nil
}

// NewQueryEncoder quantizes a term table. Terms may come in any order; they are sorted, and a
// duplicate term is an error.
func NewQueryEncoder(terms []string, weights []float32, vecs [][]float32) (*QueryEncoder, error) {
	if len(weights) != len(terms) || len(vecs) != len(terms) {
		return nil, errors.New("graphs: query encoder with " + errtext.Itoa(len(terms)) + " terms, " + errtext.Itoa(len(weights)) + " weights and " + errtext.Itoa(len(vecs)) + " vectors")
	}
	if len(terms) == 0 {
		return nil, errors.New("graphs: query encoder without terms")
	}
	dim := len(vecs[0])
	if dim < 1 || dim > MaxDim {
		return nil, errors.New("graphs: vector dimension " + errtext.Itoa(dim) + " outside [1, " + errtext.Itoa(MaxDim) + "]")
	}
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(terms[a], terms[b]) })
	q := &QueryEncoder{Dim: dim, Terms: make([]string, len(terms)), Weight: make([]float32, len(terms)),
		Scale: make([]float32, len(terms)), Data: make([]int8, len(terms)*dim)}
	for k, i := range order {
		if len(vecs[i]) != dim {
			return nil, errors.New("graphs: vector of term " + strconv.Quote(terms[i]) + " has dimension " + errtext.Itoa(len(vecs[i])) + ", want " + errtext.Itoa(dim))
		}
		if k > 0 && q.Terms[k-1] == terms[i] {
			return nil, errors.New("graphs: query encoder term " + strconv.Quote(terms[i]) + " twice")
		}
		q.Terms[k], q.Weight[k] = terms[i], weights[i]
		q.Scale[k] = Quantize(vecs[i], q.Data[k*dim:(k+1)*dim])
	}
	return q, nil
}

// checkVectors rejects vectors or an encoder that would decode as corrupt.
func (a *Artifact) checkVectors() error {
	v, q := a.Vectors, a.Encoder
	if v == nil {
		if q != nil {
			return errors.New("graphs: a query encoder needs skill vectors")
		}
		return nil
	}
	n := len(a.Skills)
	if v.Dim < 1 || v.Dim > MaxDim {
		return errors.New("graphs: vector dimension " + errtext.Itoa(v.Dim) + " outside [1, " + errtext.Itoa(MaxDim) + "]")
	}
	if len(v.Scale) != n || len(v.Data) != n*v.Dim {
		return errors.New("graphs: " + errtext.Itoa(len(v.Scale)) + " vector scales and " + errtext.Itoa(len(v.Data)) + " values for " + errtext.Itoa(n) + " skills of dimension " + errtext.Itoa(v.Dim))
	}
	if err := checkRows(v.Scale, nil, v.Data); err != nil {
		return errtext.Prefix("graphs: skill vectors: ", err)
	}
	if q == nil {
		return nil
	}
	t := len(q.Terms)
	if q.Dim != v.Dim {
		return errors.New("graphs: query encoder dimension " + errtext.Itoa(q.Dim) + ", skill vectors " + errtext.Itoa(v.Dim))
	}
	if len(q.Weight) != t || len(q.Scale) != t || len(q.Data) != t*q.Dim {
		return errors.New("graphs: query encoder with " + errtext.Itoa(t) + " terms has " + errtext.Itoa(len(q.Weight)) + " weights, " + errtext.Itoa(len(q.Scale)) + " scales and " + errtext.Itoa(len(q.Data)) + " values")
	}
	for i := 1; i < t; i++ {
		if q.Terms[i-1] >= q.Terms[i] {
			return errors.New("graphs: query encoder terms not strictly ascending at " + strconv.Quote(q.Terms[i]))
		}
	}
	if err := checkRows(q.Scale, q.Weight, q.Data); err != nil {
		return errtext.Prefix("graphs: query encoder: ", err)
	}
	return nil
}

// checkRows checks that scales and weights are finite and non-negative and that every value is
// in [-127, 127].
func checkRows(scale, weight []float32, data []int8) error {
	for i, s := range scale {
		if !finite(s) || s < 0 {
			return errors.New("row " + errtext.Itoa(i) + " has scale " + errtext.Ftoa(s))
		}
	}
	for i, w := range weight {
		if !finite(w) || w < 0 {
			return errors.New("row " + errtext.Itoa(i) + " has weight " + errtext.Ftoa(w))
		}
	}
	for i, x := range data {
		if x == math.MinInt8 {
			return errors.New("value " + errtext.Itoa(i) + " is -128")
		}
	}
	return nil
}

// vectorBodies puts the vector and encoder section bodies of a (checked) artifact in bodies,
// appending strings to heap, and returns their tags in order: format 2.0's, or with legacy 1.1's.
func (a *Artifact) vectorBodies(heap *stringHeap, bodies map[string][]byte, legacy bool) []string {
	v, q := a.Vectors, a.Encoder
	if v == nil {
		return nil
	}
	hdr := binary.LittleEndian.AppendUint32(nil, uint32(v.Dim))
	hdr = binary.LittleEndian.AppendUint32(hdr, 0)
	hdr = heap.ref(hdr, v.Model)
	bodies[tagVecHdr], bodies[tagVecScale], bodies[tagVecData] = hdr, f32Bytes(v.Scale), i8Bytes(v.Data)
	tags := slices.Clone(vectorSections)
	if q == nil {
		return tags
	}
	bodies[tagEncWgt], bodies[tagEncScale] = f32Bytes(q.Weight), f32Bytes(q.Scale)
	var flags uint32
	if !legacy && slices.Equal(q.Terms, a.Lexicon.Terms) {
		flags |= encSharedTerms
	}
	bodies[tagEncHdr] = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(q.Dim)), flags)
	if flags&encSharedTerms == 0 {
		var qtrm []byte
		for _, t := range q.Terms {
			qtrm = heap.ref(qtrm, t)
		}
		bodies[tagEncTerms] = qtrm
	}
	if legacy {
		bodies[tagEncData] = i8Bytes(q.Data)
		return append(tags, encoderSections...)
	}
	bodies[tagEncIndex], bodies[tagEncData] = dedupRows(q.Data, q.Dim)
	for _, tag := range encoderSections2 {
		if _, ok := bodies[tag]; ok {
			tags = append(tags, tag)
		}
	}
	return tags
}

// dedupRows splits data, rows of dim values, into the distinct rows in order of first use and
// each row's index among them (u32, little-endian): QIDX and QVEC of format 2.0.
func dedupRows(data []int8, dim int) (index, rows []byte) {
	first := map[string]uint32{}
	n := len(data) / dim
	index = make([]byte, 0, 4*n)
	for t := 0; t < n; t++ {
		row := i8Bytes(data[t*dim : (t+1)*dim])
		r, ok := first[string(row)]
		if !ok {
			r = uint32(len(first))
			first[string(row)] = r
			rows = append(rows, row...)
		}
		index = binary.LittleEndian.AppendUint32(index, r)
	}
	return index, rows
}

func f32Bytes(fs []float32) []byte {
	out := make([]byte, 0, 4*len(fs))
	for _, f := range fs {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
	}
	return out
}

func i8Bytes(xs []int8) []byte {
	out := make([]byte, len(xs))
	for i, x := range xs {
		out[i] = byte(x)
	}
	return out
}

// Clusters partition the skill vectors for the semantic seeds of a large library (format 2.2,
// optional): the engine compares a query with the centroids and computes exact cosines only for
// the members of the nearest clusters, instead of for every skill. The sections come together,
// and only beside the vectors (C clusters, N skills, D the vectors' dimension):
//
//	VCEN  C × D × i8       centroids, values in [-127, 127] (their length does not matter),
//	                       1 ≤ C < NoCluster
//	VASG  N × u16          each skill's cluster, below C, or NoCluster: in none (a zero vector)
type Clusters struct {
	Centroids []int8
	Assign    []uint16
}

// NoCluster is the cluster of a skill that belongs to none.
const NoCluster = 0xFFFF

var clusterSections = []string{tagCentroids, tagAssign}

const (
	tagCentroids = "VCEN"
	tagAssign    = "VASG"
)

// checkClusters rejects clusters that would decode as corrupt.
func (a *Artifact) checkClusters() error {
	c := a.Clusters
	if c == nil {
		return nil
	}
	if a.Vectors == nil {
		return errors.New("graphs: clusters need skill vectors")
	}
	nc := len(c.Centroids) / a.Vectors.Dim
	if nc < 1 || nc >= NoCluster || len(c.Centroids)%a.Vectors.Dim != 0 || len(c.Assign) != len(a.Skills) {
		return errors.New("graphs: clusters: " + errtext.Itoa(len(c.Centroids)) + " centroid values and " + errtext.Itoa(len(c.Assign)) + " assignments for " + errtext.Itoa(len(a.Skills)) + " skills")
	}
	for i, k := range c.Assign {
		if int(k) >= nc && k != NoCluster {
			return errors.New("graphs: clusters: skill " + errtext.Itoa(i) + " in cluster " + errtext.Itoa(k) + " of " + errtext.Itoa(nc))
		}
	}
	return checkRows(nil, nil, c.Centroids)
}

// bindClusters locates and validates the optional cluster sections of format 2.2.
func (g *Graph) bindClusters() error {
	cen, hasC := g.lookup(tagCentroids)
	asg, hasA := g.lookup(tagAssign)
	if !hasC && !hasA {
		return nil
	}
	bad := tagCentroids
	if hasC && g.dim > 0 && len(cen)%g.dim == 0 && len(cen) > 0 && len(cen)/g.dim < NoCluster &&
		bytes.IndexByte(cen, 0x80) < 0 {
		bad = tagAssign
		if nc := len(cen) / g.dim; len(asg) == 2*g.n {
			bad = ""
			for i := range g.n {
				if k := int(binary.LittleEndian.Uint16(asg[2*i:])); k >= nc && k != NoCluster {
					bad = tagAssign
				}
			}
		}
	}
	if bad != "" {
		return errtext.Wrap(ErrCorrupt, ": cluster section "+errtext.Quote(bad)+" invalid")
	}
	g.vcen, g.vasg = cen, asg
	return nil
}

// NumClusters is the number of vector clusters; 0 without them.
func (g *Graph) NumClusters() int {
	if g.vcen == nil {
		return 0
	}
	return len(g.vcen) / g.dim
}

// Centroids returns the clusters' centroids, NumClusters rows of VectorDim values, in place.
func (g *Graph) Centroids() []int8 { return i8s(g.vcen) }

// ClusterOf is skill i's cluster, or NoCluster.
func (g *Graph) ClusterOf(i int) int { return int(binary.LittleEndian.Uint16(g.vasg[2*i:])) }

// clusterBodies puts the cluster sections' bodies in bodies and returns their tags, none
// without clusters.
func (a *Artifact) clusterBodies(bodies map[string][]byte) []string {
	c := a.Clusters
	if c == nil {
		return nil
	}
	asg := make([]byte, 0, 2*len(c.Assign))
	for _, k := range c.Assign {
		asg = binary.LittleEndian.AppendUint16(asg, k)
	}
	bodies[tagCentroids], bodies[tagAssign] = i8Bytes(c.Centroids), asg
	return clusterSections
}

// clustersArtifact copies the decoded clusters back; nil without them.
func (g *Graph) clustersArtifact() *Clusters {
	if g.vcen == nil {
		return nil
	}
	c := &Clusters{Centroids: slices.Clone(g.Centroids()), Assign: make([]uint16, g.n)}
	for i := range c.Assign {
		c.Assign[i] = uint16(g.ClusterOf(i))
	}
	return c
}
