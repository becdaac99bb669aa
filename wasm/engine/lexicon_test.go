package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

func TestBuildLexicon(t *testing.T) {
	docs := []Doc{
		{
			Name: "heat-water", Description: "Heat water on a stove.", Tags: []string{"kitchen"},
			Schema: "temperature", Body: "Watch the pot.",
		},
		{Name: "pick-up-object", Description: "Pick up an object.", Body: "Water the plants."},
	}
	// doc 0: heat 4+2, water 4+2, stov 2, kitchen 2, temperatur .5, watch .5, pot .5 = 17.5
	// doc 1: pick 4+2, object 4+2, water .5, plant .5 = 13
	want := graphs.Lexicon{
		K1: DefaultK1, B: DefaultB, AvgDL: (17.5 + 13) / 2,
		Terms: []string{"heat", "kitchen", "object", "pick", "plant", "pot", "stov", "temperatur", "watch", "water"},
		Postings: [][]graphs.Posting{
			{{Doc: 0, TF: 6}},
			{{Doc: 0, TF: 2}},
			{{Doc: 1, TF: 6}},
			{{Doc: 1, TF: 6}},
			{{Doc: 1, TF: 0.5}},
			{{Doc: 0, TF: 0.5}},
			{{Doc: 0, TF: 2}},
			{{Doc: 0, TF: 0.5}},
			{{Doc: 0, TF: 0.5}},
			// A name-and-description match weighs twelve times a body mention.
			{{Doc: 0, TF: 6}, {Doc: 1, TF: 0.5}},
		},
		DocLen: []float32{17.5, 13},
	}
	got := BuildLexicon(docs)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildLexicon (-want +got):\n%s", diff)
	}
	// The lexicon must be one the artifact format accepts.
	if _, err := graphs.Encode(&graphs.Artifact{
		Skills:  []graphs.Skill{{Name: docs[0].Name}, {Name: docs[1].Name}},
		Lexicon: got,
	}); err != nil {
		t.Errorf("Encode rejects the lexicon: %v", err)
	}
}

func TestBuildLexiconPostingsAscending(t *testing.T) {
	// Many documents share terms, so map order inside BuildLexicon would show if unsorted.
	var docs []Doc
	for i := range 50 {
		docs = append(docs, Doc{Name: "skill" + strings.Repeat("x", i), Description: "shared words here", Body: "common body"})
	}
	lx := BuildLexicon(docs)
	for i := 1; i < len(lx.Terms); i++ {
		if lx.Terms[i-1] >= lx.Terms[i] {
			t.Errorf("terms not strictly ascending: %q then %q", lx.Terms[i-1], lx.Terms[i])
		}
	}
	for ti, ps := range lx.Postings {
		for i := 1; i < len(ps); i++ {
			if ps[i-1].Doc >= ps[i].Doc {
				t.Errorf("postings of %q not ascending: %v", lx.Terms[ti], ps)
				break
			}
		}
	}
	if i, ok := findTerm(lx, Stem("shared")); !ok || len(lx.Postings[i]) != len(docs) {
		t.Errorf("term %q should be in all %d documents", Stem("shared"), len(docs))
	}
}

func TestBuildLexiconBodyHead(t *testing.T) {
	// é is two bytes: counting bytes instead of runes would cut before the last word.
	tests := []struct {
		name string
		body string
		want bool // is "zebra" indexed
	}{
		{"last word within head", strings.Repeat("é", BodyHeadRunes-len(" zebra")) + " zebra", true},
		{"word after head", strings.Repeat("é", BodyHeadRunes) + " zebra", false},
		{"word after a long ASCII head", strings.Repeat("lorem ", BodyHeadRunes/6+1) + "zebra", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lx := BuildLexicon([]Doc{{Name: "animal-facts", Body: tt.body}})
			_, got := findTerm(lx, "zebra")
			if got != tt.want {
				t.Errorf("zebra indexed = %v, want %v (terms %.80q)", got, tt.want, lx.Terms)
			}
		})
	}
}

func TestBuildLexiconEmpty(t *testing.T) {
	lx := BuildLexicon(nil)
	if len(lx.Terms) != 0 || len(lx.DocLen) != 0 || lx.AvgDL != 0 {
		t.Errorf("BuildLexicon(nil) = %+v, want an empty lexicon", lx)
	}
}

func findTerm(lx graphs.Lexicon, term string) (int, bool) {
	for i, t := range lx.Terms {
		if t == term {
			return i, true
		}
	}
	return 0, false
}
