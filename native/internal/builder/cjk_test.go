package builder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVocabularyCJK: a CJK run's bigrams enter the distilled encoder's vocabulary, each as its
// own surface word, so that a teacher model embeds the terms a CJK query is made of.
func TestVocabularyCJK(t *testing.T) {
	terms, _, surface := vocabulary([]string{"查询天气 weather", "天气预报"})
	want := []string{"weather", "天气", "查询", "气预", "询天", "预报"}
	if d := cmp.Diff(want, terms); d != "" {
		t.Errorf("terms (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, surface); d != "" {
		t.Errorf("surface words (-want +got):\n%s", d)
	}
}
