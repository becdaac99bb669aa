package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/embed/embedtest"
)

// benchSentences are n sentences of 8 to 30 words drawn from embedtest.Words.
func benchSentences(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	var words []string
	for _, w := range embedtest.Words {
		if !strings.HasPrefix(w, "##") {
			words = append(words, w)
		}
	}
	out := make([]string, n)
	for i := range out {
		k := 8 + rng.IntN(23)
		s := make([]string, k)
		for j := range s {
			s[j] = words[rng.IntN(len(words))]
		}
		out[i] = strings.Join(s, " ")
	}
	return out
}

// BenchmarkEmbed reports sentences per second for the onnx embedder (the generated
// MiniLM-signature model at MiniLM's width, 384, but one attention layer without the
// feed-forward block: a real MiniLM-L6 does roughly 20 times the work per token) at 1 and 2
// threads and batch 1 and 32, and for the builtin model.
func BenchmarkEmbed(b *testing.B) {
	texts := benchSentences(256)
	run := func(b *testing.B, e Embedder) {
		ctx := context.Background()
		b.ReportAllocs()
		start := time.Now()
		n := 0
		for b.Loop() {
			if _, err := e.Embed(ctx, texts); err != nil {
				b.Fatal(err)
			}
			n += len(texts)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "sentences/s")
	}
	b.Run("builtin", func(b *testing.B) {
		m, err := NewBuiltin(texts, BuiltinOptions{})
		if err != nil {
			b.Fatal(err)
		}
		run(b, m)
	})
	dir := b.TempDir()
	if err := embedtest.New(384, 128, 7).WriteDir(dir, 128); err != nil {
		b.Fatal(err)
	}
	if _, err := ResolveLibrary(""); err != nil {
		if os.Getenv("CI") != "" {
			b.Fatal(err)
		}
		b.Log("onnx skipped: ", err)
		return
	}
	for _, threads := range []int{1, 2} {
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("onnx/threads=%d/batch=%d", threads, batch), func(b *testing.B) {
				e, err := NewONNX(ONNXOptions{Dir: dir, Threads: threads, Batch: batch})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				run(b, e)
			})
		}
	}
}
