//go:build cgo

package embed

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ONNX Runtime has one environment per process; it is created by the first NewONNX and lives
// until the process exits. Every later NewONNX must ask for the same library.
var (
	ortMu      sync.Mutex
	ortLibrary string
)

func initRuntime(lib string) error {
	ortMu.Lock()
	defer ortMu.Unlock()
	if ortLibrary != "" {
		if lib != ortLibrary {
			return fmt.Errorf("embed: ONNX Runtime is already loaded from %s; one process cannot also load %s", ortLibrary, lib)
		}
		return nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("embed: loading ONNX Runtime from %s (version ≥ 1.24 needed): %w", lib, err)
	}
	ortLibrary = lib
	return nil
}

// ONNX embeds texts with a sentence-transformers model in ONNX form.
type ONNX struct {
	opt       ONNXOptions
	id        string
	dim       int
	tok       *tokenizer
	session   *ort.DynamicAdvancedSession
	options   *ort.SessionOptions
	typeInput bool // the model takes token_type_ids
}

// NewONNX loads the model of opt.Dir. Close it to release the session.
func NewONNX(opt ONNXOptions) (*ONNX, error) {
	model, err := modelFiles(&opt)
	if err != nil {
		return nil, err
	}
	tok, err := loadTokenizer(opt.Dir, opt.MaxLen)
	if err != nil {
		return nil, err
	}
	lib, err := ResolveLibrary(opt.Library)
	if err != nil {
		return nil, err
	}
	if err := initRuntime(lib); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfo(model)
	if err != nil {
		return nil, fmt.Errorf("embed: reading %s: %w", model, err)
	}
	has := map[string]bool{}
	for _, in := range ins {
		has[in.Name] = true
	}
	if !has["input_ids"] || !has["attention_mask"] {
		return nil, fmt.Errorf("embed: %s does not take input_ids and attention_mask (inputs %v); not a BERT-style sentence model", model, names(ins))
	}
	hasOut := false
	for _, o := range outs {
		hasOut = hasOut || o.Name == "last_hidden_state"
	}
	if !hasOut {
		return nil, fmt.Errorf("embed: %s has no last_hidden_state output (outputs %v)", model, names(outs))
	}
	inputs := []string{"input_ids", "attention_mask"}
	if has["token_type_ids"] {
		inputs = append(inputs, "token_type_ids")
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	e := &ONNX{opt: opt, tok: tok, options: so, typeInput: has["token_type_ids"]}
	if err := errors.Join(so.SetIntraOpNumThreads(opt.Threads), so.SetInterOpNumThreads(1)); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("embed: setting %d threads: %w", opt.Threads, err)
	}
	if e.session, err = ort.NewDynamicAdvancedSession(model, inputs, []string{"last_hidden_state"}, so); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("embed: loading %s: %w", model, err)
	}
	// One run learns the hidden size, whatever the model declares.
	probe, err := e.run([]string{""})
	if err != nil {
		e.Close()
		return nil, err
	}
	e.dim = len(probe[0])
	if e.id, err = modelID(opt, model, tok.MaxLen); err != nil {
		e.Close()
		return nil, fmt.Errorf("embed: %w", err)
	}
	return e, nil
}

func names(infos []ort.InputOutputInfo) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.Name)
	}
	return out
}

// Close releases the session.
func (e *ONNX) Close() error {
	var errs []error
	if e.session != nil {
		errs = append(errs, e.session.Destroy())
		e.session = nil
	}
	if e.options != nil {
		errs = append(errs, e.options.Destroy())
		e.options = nil
	}
	return errors.Join(errs...)
}

// ID names the model folder, a hash of its model and tokenizer files, the pooling and the
// maximum length.
func (e *ONNX) ID() string { return e.id }

// Dim is the model's hidden size.
func (e *ONNX) Dim() int { return e.dim }

// Embed runs the texts through the model in batches of ONNXOptions.Batch, pools and
// normalizes. Texts are batched in order of length, so a batch pads little.
func (e *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	order := make([]int, len(texts))
	for i, t := range texts {
		seqs[i], order[i] = e.tok.encode(t), i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) < len(seqs[order[b]]) })
	out := make([][]float32, len(texts))
	batch := make([][]int32, 0, e.opt.Batch)
	for start := 0; start < len(order); start += e.opt.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := order[start:min(start+e.opt.Batch, len(order))]
		batch = batch[:0]
		for _, i := range idx {
			batch = append(batch, seqs[i])
		}
		vecs, err := e.runIDs(batch)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = vecs[k]
		}
	}
	return out, nil
}

// run embeds one batch of texts.
func (e *ONNX) run(texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		seqs[i] = e.tok.encode(t)
	}
	return e.runIDs(seqs)
}

// runIDs embeds one batch of token sequences: pad to the longest, run, pool.
func (e *ONNX) runIDs(seqs [][]int32) (vecs [][]float32, err error) {
	b := len(seqs)
	width := 1
	for _, seq := range seqs {
		width = max(width, len(seq))
	}
	ids := make([]int64, b*width)
	mask := make([]int64, b*width)
	types := make([]int64, b*width)
	for i, seq := range seqs {
		for j := range width {
			if j < len(seq) {
				ids[i*width+j], mask[i*width+j] = int64(seq[j]), 1
			} else {
				ids[i*width+j] = int64(e.tok.padID())
			}
		}
	}
	shape := ort.NewShape(int64(b), int64(width))
	var tensors []*ort.Tensor[int64]
	defer func() {
		for _, t := range tensors {
			err = errors.Join(err, t.Destroy())
		}
	}()
	for _, data := range [][]int64{ids, mask, types} {
		t, terr := ort.NewTensor(shape, data)
		if terr != nil {
			return nil, fmt.Errorf("embed: %w", terr)
		}
		tensors = append(tensors, t)
	}
	inputs := []ort.Value{tensors[0], tensors[1]}
	if e.typeInput {
		inputs = append(inputs, tensors[2])
	}
	outputs := []ort.Value{nil}
	if err := e.session.Run(inputs, outputs); err != nil {
		return nil, fmt.Errorf("embed: running %s: %w", e.opt.Dir, err)
	}
	defer func() { err = errors.Join(err, outputs[0].Destroy()) }()
	hidden, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("embed: last_hidden_state of %s is not a float32 tensor", e.opt.Dir)
	}
	s := hidden.GetShape()
	if len(s) != 3 || s[0] != int64(b) || s[1] != int64(width) || s[2] < 1 {
		return nil, fmt.Errorf("embed: last_hidden_state has shape %v, want [%d %d hidden]", s, b, width)
	}
	dim := int(s[2])
	data := hidden.GetData()
	vecs = make([][]float32, b)
	for i := range b {
		vecs[i] = pool(data[i*width*dim:(i+1)*width*dim], mask[i*width:(i+1)*width], dim, e.opt.Pooling)
	}
	return vecs, nil
}
