// Package embed turns texts into unit-length sentence vectors for caskg's semantic channel
// (the builder's semantic signal, the engine's semantic seeds). Three embedders implement one interface:
//
//   - Builtin, the default: a classical semantic model learned from the library itself
//     (TF-IDF over the engine's terms reduced by a truncated SVD, i.e. latent semantic
//     analysis). Offline, deterministic, nothing to download; a real sentence model is better.
//   - ONNX: any sentence-transformers export (model.onnx with tokenizer.json or vocab.txt) run
//     by ONNX Runtime through cgo, with BERT WordPiece tokenization equal to Hugging Face's.
//   - HTTP: any OpenAI-compatible /v1/embeddings endpoint.
//
// Cached wraps any of them with an on-disk cache keyed by (model id, text hash).
package embed

import (
	"context"
	"fmt"
	"math"
)

// Embedder maps texts to vectors. Implementations are safe for concurrent use.
type Embedder interface {
	// ID names the model and every setting that changes its vectors; two embedders with the
	// same ID give the same vectors. It keys caches and is stored in artifacts.
	ID() string
	// Dim is the vectors' dimension; 0 while it is not known yet (an HTTP model before its
	// first answer, unless configured).
	Dim() int
	// Embed returns one vector per text, in order, each of unit length — except the zero vector
	// for a text the model has nothing to say about (the builtin model and a text with no term
	// of its vocabulary).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// TermEncoder is implemented by embedders whose model is itself a term → vector table (the
// builtin model): the artifact's query encoder is then the model, not a distillation of it.
// Embedding a text must equal the encoder formula of graphs.QueryEncoder over these terms.
type TermEncoder interface {
	QueryEncoder() (terms []string, weights []float32, vecs [][]float32)
}

// normalize scales v to unit length in place; a zero or non-finite vector becomes all zeros.
func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		clear(v)
		return
	}
	inv := 1 / math.Sqrt(ss)
	for j, x := range v {
		v[j] = float32(float64(x) * inv)
	}
}

// checkVectors verifies that an embedder returned one finite vector of dimension dim per text.
func checkVectors(vecs [][]float32, n, dim int, who string) error {
	if len(vecs) != n {
		return fmt.Errorf("embed: %s returned %d vectors for %d texts", who, len(vecs), n)
	}
	for i, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("embed: %s returned a vector of dimension %d for text %d, want %d", who, len(v), i, dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("embed: %s returned a non-finite value for text %d", who, i)
			}
		}
	}
	return nil
}
