//go:build cgo

package builder

import (
	"os"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/embed/embedtest"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// TestSemanticONNX builds the sample artifact with a teacher model run by ONNX Runtime (the
// generated MiniLM-signature model): skill vectors from the model, a query encoder distilled
// from it, and exact query vectors accepted by the engine.
func TestSemanticONNX(t *testing.T) {
	if _, err := embed.ResolveLibrary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := embedtest.New(32, 128, 11).WriteDir(dir, 128); err != nil {
		t.Fatal(err)
	}
	var teacher *embed.ONNX
	g := withSemantic(t, loadLib(t, sampleLib), func([]ingest.Skill) embed.Embedder {
		var err error
		if teacher, err = embed.NewONNX(embed.ONNXOptions{Dir: dir, Threads: 1}); err != nil {
			t.Fatal(err)
		}
		return teacher
	})
	defer teacher.Close()
	if g.VectorDim() != 32 || !strings.HasPrefix(g.VectorModel(), "onnx:") || !g.HasEncoder() {
		t.Fatalf("vectors dim %d model %q encoder %v", g.VectorDim(), g.VectorModel(), g.HasEncoder())
	}
	texts := make([]string, g.NumSkills())
	skills := loadLib(t, sampleLib)
	for i := range texts {
		for _, s := range skills {
			if s.Name == g.Name(i) {
				texts[i] = skillText(s)
			}
		}
	}
	terms, _, _ := vocabulary(texts)
	if g.NumEncoderTerms() != len(terms) {
		t.Errorf("encoder has %d terms, the library's vocabulary %d", g.NumEncoderTerms(), len(terms))
	}
	eng := engine.New(g)
	if _, err := eng.Query(engine.Request{Query: "heat the egg", Vector: make([]float32, 31)}); err == nil {
		t.Error("a vector of the wrong dimension was accepted")
	}
	tasks, err := eval.ReadTasks(sampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	seeds, sem := agreement(t, g, teacher, tasks)
	t.Logf("sample, generated onnx teacher (random weights): top-5 agreement distilled encoder vs exact vector: fused seeds %.3f, semantic list %.3f", seeds, sem)
}
