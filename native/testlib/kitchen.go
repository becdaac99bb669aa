package testlib

import (
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// Kitchen returns the three skills of the examples, a fresh copy each call: fill-kettle,
// boil-water and brew-tea.
func Kitchen() []graphs.Skill {
	return []graphs.Skill{
		{Name: "fill-kettle", Description: "Fill a kettle from the tap."},
		{Name: "boil-water", Description: "Boil water on the stove."},
		{Name: "brew-tea", Description: "Steep tea leaves in hot water."},
	}
}

// Encode sets art's lexicon to the one caskg build would give its skills and returns the
// encoded artifact, for the examples and tests that make one on the spot. It panics on an error,
// as an example, which has no testing.TB, would.
func Encode(art *graphs.Artifact) []byte {
	docs := make([]engine.Doc, len(art.Skills))
	for i, s := range art.Skills {
		docs[i] = engine.Doc{Name: s.Name, Description: s.Description, Body: s.Body}
	}
	art.Lexicon = engine.BuildLexicon(docs)
	data, err := graphs.Encode(art)
	if err != nil {
		panic(err)
	}
	return data
}

// Decode returns the graph of the artifact data (Sample's, Multilingual's, Encode's), failing
// tb when it does not decode.
func Decode(tb testing.TB, data []byte) *graphs.Graph {
	tb.Helper()
	g, err := graphs.Decode(data)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
