package testlib

import (
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

// Encode returns the artifact of skills and edges, with the lexicon caskg build would give the
// skills (no vectors, no memory), for the examples of the packages that load one. It panics on
// an error, as an example, which has no testing.TB, would.
func Encode(skills []graphs.Skill, edges []graphs.Edge) []byte {
	docs := make([]engine.Doc, len(skills))
	for i, s := range skills {
		docs[i] = engine.Doc{Name: s.Name, Description: s.Description, Body: s.Body}
	}
	data, err := graphs.Encode(&graphs.Artifact{Skills: skills, Edges: edges, Lexicon: engine.BuildLexicon(docs)})
	if err != nil {
		panic(err)
	}
	return data
}
