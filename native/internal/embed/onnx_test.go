//go:build cgo

package embed

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/caskg/caskg/native/internal/embed/embedtest"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// testModelDir holds the generated model while the test binary runs; TestMain removes it.
var testModelDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if testModelDir != "" {
		os.RemoveAll(testModelDir)
	}
	os.Exit(code)
}

// testModel writes the generated MiniLM-signature model once per test binary.
var testModel = sync.OnceValues(func() (*embedtest.Model, string) {
	m := embedtest.New(32, 64, 7)
	dir, err := os.MkdirTemp("", "caskg-minilm-")
	if err != nil {
		panic(err)
	}
	testModelDir = dir
	if err := m.WriteDir(dir, 64); err != nil {
		panic(err)
	}
	return m, dir
})

// requireRuntime skips when ONNX Runtime is not installed, except in CI, where `make test`
// installs it and a skip would hide a broken install.
func requireRuntime(t testing.TB) {
	t.Helper()
	if _, err := ResolveLibrary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func newTestONNX(t testing.TB, opt ONNXOptions) *ONNX {
	t.Helper()
	requireRuntime(t)
	_, dir := testModel()
	opt.Dir = dir
	e, err := NewONNX(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// reference pools the generated model's own forward pass over ids, computed in float64 from
// its weights without ONNX Runtime.
func reference(m *embedtest.Model, ids []int32, mode string) []float64 {
	n := len(ids)
	id64, mask, types := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, id := range ids {
		id64[i], mask[i] = int64(id), 1
	}
	hidden := m.Forward(id64, mask, types)
	out := make([]float64, m.Hidden)
	if mode == PoolingCLS {
		copy(out, hidden[0])
	} else {
		for _, h := range hidden {
			for j, x := range h {
				out[j] += x / float64(n)
			}
		}
	}
	var ss float64
	for _, x := range out {
		ss += x * x
	}
	for j := range out {
		out[j] /= math.Sqrt(ss)
	}
	return out
}

var onnxTexts = []string{
	"heat the egg in the microwave",
	"",
	"Find the mug, clean it in the sink and put it in the fridge!",
	"the the the",
	"unknown wordsxyz and 中国 café",
	strings.Repeat("parse json files and export csv tables ", 20), // truncated at 64 tokens
	"send report",
}

func TestONNXMatchesReference(t *testing.T) {
	m, _ := testModel()
	for _, tc := range []struct {
		name    string
		batch   int
		pooling string
		threads int
	}{
		{"unbatched mean", 1, PoolingMean, 1},
		{"batched mean", 32, PoolingMean, 2},
		{"batches of 3", 3, PoolingMean, 1},
		{"batched cls", 32, PoolingCLS, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestONNX(t, ONNXOptions{Batch: tc.batch, Pooling: tc.pooling, Threads: tc.threads})
			if e.Dim() != m.Hidden {
				t.Fatalf("Dim() = %d, want %d", e.Dim(), m.Hidden)
			}
			got, err := e.Embed(context.Background(), onnxTexts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range onnxTexts {
				ids := e.tok.encode(text)
				if len(ids) > 64 {
					t.Fatalf("text %d: %d ids past the maximum length 64", i, len(ids))
				}
				want := reference(m, ids, tc.pooling)
				for j := range want {
					if math.Abs(float64(got[i][j])-want[j]) > 1e-4 {
						t.Fatalf("text %d (%q) component %d: onnxruntime %v, reference %v", i, text, j, got[i][j], want[j])
					}
				}
			}
		})
	}
}

// The ids of one sentence derived by hand from embedtest.Words, fed to the reference directly.
func TestONNXHandTokenized(t *testing.T) {
	m, _ := testModel()
	e := newTestONNX(t, ONNXOptions{})
	id := func(w string) int32 {
		for i, v := range m.Vocab {
			if v == w {
				return int32(i)
			}
		}
		t.Fatalf("%q not in the vocabulary", w)
		return 0
	}
	const text = "Pick the MUGS, heating!"
	ids := []int32{id("[CLS]"), id("pick"), id("the"), id("mug"), id("##s"), id("[UNK]"), id("heat"), id("##ing"), id("[UNK]"), id("[SEP]")}
	if got := e.tok.encode(text); fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("encode(%q) = %v, by hand %v", text, got, ids)
	}
	got, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	want := reference(m, ids, PoolingMean)
	for j := range want {
		if math.Abs(float64(got[0][j])-want[j]) > 1e-4 {
			t.Fatalf("component %d: %v, reference %v", j, got[0][j], want[j])
		}
	}
}

func TestONNXErrors(t *testing.T) {
	requireRuntime(t)
	_, dir := testModel()
	empty := t.TempDir()
	if _, err := NewONNX(ONNXOptions{Dir: empty}); err == nil || !strings.Contains(err.Error(), "no model.onnx") {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := NewONNX(ONNXOptions{Dir: dir, Pooling: "max"}); err == nil || !strings.Contains(err.Error(), `pooling "max"`) {
		t.Errorf("bad pooling: %v", err)
	}
	if _, err := NewONNX(ONNXOptions{Dir: dir, Library: filepath.Join(empty, "nope.so")}); err == nil ||
		!strings.Contains(err.Error(), "--ort-lib") {
		t.Errorf("missing library: %v", err)
	}
	// A model without the sentence-model inputs is refused with its input names.
	bad := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), "attention_mask", "attention_mazk"))
	for name, content := range map[string][]byte{"model.onnx": data, "vocab.txt": fixture.ReadFile(t, filepath.Join(dir, "vocab.txt"))} {
		if err := os.WriteFile(filepath.Join(bad, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewONNX(ONNXOptions{Dir: bad}); err == nil || !strings.Contains(err.Error(), "attention_mazk") {
		t.Errorf("wrong inputs: %v", err)
	}
}

func TestONNXIDChangesWithSettings(t *testing.T) {
	a := newTestONNX(t, ONNXOptions{Pooling: PoolingMean})
	b := newTestONNX(t, ONNXOptions{Pooling: PoolingCLS})
	c := newTestONNX(t, ONNXOptions{Pooling: PoolingMean, Threads: 2, Batch: 4})
	if a.ID() == b.ID() || a.ID() != c.ID() || !strings.HasPrefix(a.ID(), "onnx:") {
		t.Errorf("IDs %q, %q, %q: pooling must change the id, threads and batch must not", a.ID(), b.ID(), c.ID())
	}
}
