// Package embedtest makes a small sentence-embedding model with the MiniLM signature — inputs
// input_ids, attention_mask and token_type_ids ([batch, sequence] int64), output
// last_hidden_state ([batch, sequence, hidden] float32) — as an ONNX file written by hand
// (protobuf, opset 17), together with a vocabulary, and computes the same network's output
// independently in plain Go. Tests run the file through ONNX Runtime and compare; no
// pretrained model is needed.
//
// The network is one BERT layer without the feed-forward block: word + position + token-type
// embeddings, layer norm, single-head self-attention masked by attention_mask, a residual
// connection and a second layer norm. Padding positions get no attention, so a padded batch
// gives the same outputs for real tokens as each text alone.
package embedtest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Model is the network's configuration and weights (row-major float32).
type Model struct {
	Vocab          []string
	Hidden, MaxPos int
	Word           []float32 // len(Vocab)×Hidden
	Pos            []float32 // MaxPos×Hidden
	Type           []float32 // 2×Hidden
	LN1G, LN1B     []float32
	Wq, Wk, Wv, Wo []float32 // Hidden×Hidden, x·W
	Bq, Bk, Bv, Bo []float32
	LN2G, LN2B     []float32
}

// Epsilon of both layer norms.
const Epsilon = 1e-12

// Words is the vocabulary of New after the special tokens: common English words, skill-ish
// words and a few suffix pieces.
var Words = strings.Fields(`the a an and or of to in on for with from by at is are be it this that
	as you your task use using file files data text table tables pdf image images code test tests
	run running build make find search get set read write open close create delete update list
	heat cool clean wash pick put place object objects microwave fridge sink knife egg mug cup tea
	water boil kettle stove room door lamp plant seed pot soil paint wall circuit wire battery
	measure temperature mass scale check verify send report save export chart plot analyze
	analysis compute calculate convert parse extract merge split sort filter format json csv
	xml html markdown email user users system language location service status error errors
	log logs debug fix repair retry recover install deploy server api request response query
	model train evaluate score result results output input inputs outputs step steps skill
	skills tool tools graph node edge path value values number numbers date time name names
	##s ##ing ##ed ##er ##ly ##es ##ion ##al`)

// New returns a model over the special tokens [PAD] [UNK] [CLS] [SEP] [MASK] and Words, with
// weights drawn from a fixed seed.
func New(hidden, maxPos int, seed uint64) *Model {
	vocab := append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, Words...)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	norm := func(n int, sd float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.NormFloat64() * sd)
		}
		return out
	}
	around := func(n int, c, sd float64) []float32 {
		out := norm(n, sd)
		for i := range out {
			out[i] += float32(c)
		}
		return out
	}
	h := hidden
	sd := 1 / math.Sqrt(float64(h))
	return &Model{
		Vocab: vocab, Hidden: h, MaxPos: maxPos,
		Word: norm(len(vocab)*h, 1), Pos: norm(maxPos*h, 0.2), Type: norm(2*h, 0.1),
		LN1G: around(h, 1, 0.1), LN1B: norm(h, 0.1),
		Wq: norm(h*h, sd), Wk: norm(h*h, sd), Wv: norm(h*h, sd), Wo: norm(h*h, sd),
		Bq: norm(h, 0.1), Bk: norm(h, 0.1), Bv: norm(h, 0.1), Bo: norm(h, 0.1),
		LN2G: around(h, 1, 0.1), LN2B: norm(h, 0.1),
	}
}

// WriteDir writes model.onnx, vocab.txt and tokenizer_config.json into dir, a model folder as
// sentence-transformers exports it (without tokenizer.json).
func (m *Model) WriteDir(dir string, maxLen int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"model.onnx":            m.ONNX(),
		"vocab.txt":             []byte(strings.Join(m.Vocab, "\n") + "\n"),
		"tokenizer_config.json": []byte(`{"do_lower_case": true, "model_max_length": ` + itoa(maxLen) + `}`),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// Forward computes last_hidden_state for one sequence (ids, mask and token types of one text,
// padded or not) in float64.
func (m *Model) Forward(ids, mask, types []int64) [][]float64 {
	h, s := m.Hidden, len(ids)
	x := make([][]float64, s)
	for i := range s {
		x[i] = make([]float64, h)
		for j := range h {
			x[i][j] = float64(m.Word[int(ids[i])*h+j]) + float64(m.Pos[i*h+j]) + float64(m.Type[int(types[i])*h+j])
		}
		layerNorm(x[i], m.LN1G, m.LN1B)
	}
	lin := func(w, b []float32) [][]float64 {
		out := make([][]float64, s)
		for i := range s {
			out[i] = make([]float64, h)
			for j := range h {
				acc := float64(b[j])
				for k := range h {
					acc += x[i][k] * float64(w[k*h+j])
				}
				out[i][j] = acc
			}
		}
		return out
	}
	q, k, v := lin(m.Wq, m.Bq), lin(m.Wk, m.Bk), lin(m.Wv, m.Bv)
	scale := 1 / math.Sqrt(float64(h))
	out := make([][]float64, s)
	for i := range s {
		scores := make([]float64, s)
		mx := math.Inf(-1)
		for j := range s {
			var dot float64
			for d := range h {
				dot += q[i][d] * k[j][d]
			}
			scores[j] = dot*scale + (1-float64(mask[j]))*-10000
			mx = math.Max(mx, scores[j])
		}
		var sum float64
		for j := range scores {
			scores[j] = math.Exp(scores[j] - mx)
			sum += scores[j]
		}
		ctx := make([]float64, h)
		for j := range s {
			for d := range h {
				ctx[d] += scores[j] / sum * v[j][d]
			}
		}
		out[i] = make([]float64, h)
		for j := range h {
			acc := float64(m.Bo[j])
			for d := range h {
				acc += ctx[d] * float64(m.Wo[d*h+j])
			}
			out[i][j] = x[i][j] + acc
		}
		layerNorm(out[i], m.LN2G, m.LN2B)
	}
	return out
}

func layerNorm(x []float64, g, b []float32) {
	var mean, vr float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		vr += (v - mean) * (v - mean)
	}
	vr /= float64(len(x))
	inv := 1 / math.Sqrt(vr+Epsilon)
	for i := range x {
		x[i] = (x[i]-mean)*inv*float64(g[i]) + float64(b[i])
	}
}

// ONNX returns the network as an ONNX ModelProto (IR version 8, opset 17).
func (m *Model) ONNX() []byte {
	h := int64(m.Hidden)
	var g pb
	g.str(2, "caskg-test-minilm")
	for _, n := range []*pb{
		node("Gather", []string{"word_emb", "input_ids"}, "we"),
		node("Gather", []string{"type_emb", "token_type_ids"}, "te"),
		node("Shape", []string{"input_ids"}, "shape"),
		node("Gather", []string{"shape", "c_one_i"}, "seq_len"),
		node("Range", []string{"c_zero_i", "seq_len", "c_one_i"}, "pos_ids"),
		node("Gather", []string{"pos_emb", "pos_ids"}, "pe"),
		node("Add", []string{"we", "te"}, "e1"),
		node("Add", []string{"e1", "pe"}, "e2"),
		node("LayerNormalization", []string{"e2", "ln1_g", "ln1_b"}, "x", intAttr("axis", -1), floatAttr("epsilon", Epsilon)),
		node("MatMul", []string{"x", "wq"}, "q0"), node("Add", []string{"q0", "bq"}, "q"),
		node("MatMul", []string{"x", "wk"}, "k0"), node("Add", []string{"k0", "bk"}, "k"),
		node("MatMul", []string{"x", "wv"}, "v0"), node("Add", []string{"v0", "bv"}, "v"),
		node("Transpose", []string{"k"}, "kt", intsAttr("perm", 0, 2, 1)),
		node("MatMul", []string{"q", "kt"}, "s0"),
		node("Mul", []string{"s0", "c_scale"}, "s1"),
		node("Cast", []string{"attention_mask"}, "mask_f", intAttr("to", 1)),
		node("Unsqueeze", []string{"mask_f", "c_axes1"}, "mask_u"),
		node("Sub", []string{"c_one_f", "mask_u"}, "mask_inv"),
		node("Mul", []string{"mask_inv", "c_neg"}, "mask_bias"),
		node("Add", []string{"s1", "mask_bias"}, "s2"),
		node("Softmax", []string{"s2"}, "attn", intAttr("axis", -1)),
		node("MatMul", []string{"attn", "v"}, "ctx"),
		node("MatMul", []string{"ctx", "wo"}, "o0"), node("Add", []string{"o0", "bo"}, "o"),
		node("Add", []string{"x", "o"}, "r"),
		node("LayerNormalization", []string{"r", "ln2_g", "ln2_b"}, "last_hidden_state", intAttr("axis", -1), floatAttr("epsilon", Epsilon)),
	} {
		g.msg(1, n)
	}
	for _, t := range []*pb{
		floatTensor("word_emb", m.Word, int64(len(m.Vocab)), h),
		floatTensor("pos_emb", m.Pos, int64(m.MaxPos), h),
		floatTensor("type_emb", m.Type, 2, h),
		floatTensor("ln1_g", m.LN1G, h), floatTensor("ln1_b", m.LN1B, h),
		floatTensor("wq", m.Wq, h, h), floatTensor("bq", m.Bq, h),
		floatTensor("wk", m.Wk, h, h), floatTensor("bk", m.Bk, h),
		floatTensor("wv", m.Wv, h, h), floatTensor("bv", m.Bv, h),
		floatTensor("wo", m.Wo, h, h), floatTensor("bo", m.Bo, h),
		floatTensor("ln2_g", m.LN2G, h), floatTensor("ln2_b", m.LN2B, h),
		floatTensor("c_scale", []float32{float32(1 / math.Sqrt(float64(h)))}),
		floatTensor("c_one_f", []float32{1}),
		floatTensor("c_neg", []float32{-10000}),
		int64Tensor("c_one_i", []int64{1}),
		int64Tensor("c_zero_i", []int64{0}),
		int64Tensor("c_axes1", []int64{1}, 1),
	} {
		g.msg(5, t)
	}
	for _, name := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		g.msg(11, valueInfo(name, 7, "batch", "sequence"))
	}
	g.msg(12, valueInfo("last_hidden_state", 1, "batch", "sequence", h))

	var model, opset pb
	model.varint(1, 8) // ir_version
	model.str(2, "caskg-embedtest")
	opset.str(1, "")
	opset.varint(2, 17)
	model.msg(8, &opset)
	model.msg(7, &g)
	return model.b
}

// pb appends protobuf fields.
type pb struct{ b []byte }

func (p *pb) tag(field, wire int) { p.b = binary.AppendUvarint(p.b, uint64(field<<3|wire)) }
func (p *pb) varint(field int, v int64) {
	p.tag(field, 0)
	p.b = binary.AppendUvarint(p.b, uint64(v))
}
func (p *pb) bytes(field int, b []byte) {
	p.tag(field, 2)
	p.b = binary.AppendUvarint(p.b, uint64(len(b)))
	p.b = append(p.b, b...)
}
func (p *pb) str(field int, s string) { p.bytes(field, []byte(s)) }
func (p *pb) msg(field int, m *pb)    { p.bytes(field, m.b) }
func (p *pb) fixed32(field int, v uint32) {
	p.tag(field, 5)
	p.b = binary.LittleEndian.AppendUint32(p.b, v)
}

// node is a NodeProto: inputs (1), output (2), name (3), op_type (4), attributes (5).
func node(op string, inputs []string, output string, attrs ...*pb) *pb {
	var n pb
	for _, in := range inputs {
		n.str(1, in)
	}
	n.str(2, output)
	n.str(3, output+"_node")
	n.str(4, op)
	for _, a := range attrs {
		n.msg(5, a)
	}
	return &n
}

// AttributeProto: name (1), f (2), i (3), ints (8), type (20): FLOAT 1, INT 2, INTS 7.
func intAttr(name string, v int64) *pb {
	var a pb
	a.str(1, name)
	a.varint(3, v)
	a.varint(20, 2)
	return &a
}

func floatAttr(name string, v float32) *pb {
	var a pb
	a.str(1, name)
	a.fixed32(2, math.Float32bits(v))
	a.varint(20, 1)
	return &a
}

func intsAttr(name string, vs ...int64) *pb {
	var a pb
	a.str(1, name)
	for _, v := range vs {
		a.varint(8, v)
	}
	a.varint(20, 7)
	return &a
}

// TensorProto: dims (1), data_type (2: FLOAT 1, INT64 7), name (8), raw_data (9, little-endian).
func tensor(name string, dataType int64, raw []byte, dims ...int64) *pb {
	var t pb
	for _, d := range dims {
		t.varint(1, d)
	}
	t.varint(2, dataType)
	t.str(8, name)
	t.bytes(9, raw)
	return &t
}

func floatTensor(name string, data []float32, dims ...int64) *pb {
	raw := make([]byte, 0, 4*len(data))
	for _, f := range data {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
	}
	return tensor(name, 1, raw, dims...)
}

func int64Tensor(name string, data []int64, dims ...int64) *pb {
	raw := make([]byte, 0, 8*len(data))
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
	}
	return tensor(name, 7, raw, dims...)
}

// valueInfo is a ValueInfoProto: name (1), type (2) = TypeProto{tensor_type (1) = {elem_type (1),
// shape (2) = {dim (1) = {dim_value (1) | dim_param (2)}}}}. Dimensions are int64 or string.
func valueInfo(name string, elem int64, dims ...any) *pb {
	var shape pb
	for _, d := range dims {
		var dim pb
		switch d := d.(type) {
		case int64:
			dim.varint(1, d)
		case string:
			dim.str(2, d)
		}
		shape.msg(1, &dim)
	}
	var tt, typ, vi pb
	tt.varint(1, elem)
	tt.msg(2, &shape)
	typ.msg(1, &tt)
	vi.str(1, name)
	vi.msg(2, &typ)
	return &vi
}
