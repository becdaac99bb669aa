package graphs_test

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
)

// An artifact is encoded once, by caskg build, and decoded by every host; the Graph reads the
// bytes in place.
func Example() {
	data, err := graphs.Encode(&graphs.Artifact{
		Skills: []graphs.Skill{
			{Name: "fill-kettle", Description: "Fill a kettle with water from the tap."},
			{Name: "boil-water", Description: "Boil water on the stove."},
		},
		Edges: []graphs.Edge{{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency}},
		// The BM25 index the engine answers from (caskg build makes it with the engine's
		// tokenizer): here one term, in both skills.
		Lexicon: graphs.Lexicon{K1: 1.2, B: 0.75, AvgDL: 5, Terms: []string{"water"},
			Postings: [][]graphs.Posting{{{Doc: 0, TF: 1}, {Doc: 1, TF: 1}}}, DocLen: []float32{5, 5}},
	})
	if err != nil {
		panic(err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(data[:4]) == graphs.Magic, g.NumSkills(), "skills,", g.NumEdges(), "edge")
	for i := range g.NumSkills() {
		lo, hi := g.Out(i)
		fmt.Printf("%s: %q, %d out\n", g.Name(i), g.Description(i), hi-lo)
	}
	_, err = graphs.Decode([]byte("# notes"))
	fmt.Println(err)
	// Output:
	// true 2 skills, 1 edge
	// fill-kettle: "Fill a kettle with water from the tap.", 1 out
	// boil-water: "Boil water on the stove.", 0 out
	// graphs: not a caskg artifact
}
