package engine_test

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// newEngine prepares an engine as a host does with an artifact's bytes; here the artifact is
// encoded on the spot by the test kit, with the lexicon caskg build would give it.
func newEngine(skills []graphs.Skill, edges []graphs.Edge) *engine.Engine {
	g, err := graphs.Decode(testlib.Encode(&graphs.Artifact{Skills: skills, Edges: edges}))
	if err != nil {
		panic(err)
	}
	return engine.New(g)
}

func ExampleEngine_Query() {
	e := newEngine([]graphs.Skill{
		{Name: "fill-kettle", Description: "Fill a kettle from the tap."},
		{Name: "boil-water", Description: "Boil water on the stove."},
		{Name: "brew-tea", Description: "Steep tea leaves in hot water."},
	}, []graphs.Edge{
		{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency},
		{Source: 1, Target: 2, Weight: 0.6, Assoc: 0.6, State: graphs.Uncertain, Type: graphs.Workflow},
	})

	// "boil water" matches boil-water and, on "water", brew-tea: two seeds. fill-kettle shares
	// no word with the query; the graph brings it in as boil-water's prerequisite.
	resp, err := e.Query(engine.Request{Query: "boil water", K: 3})
	if err != nil {
		panic(err)
	}
	for _, r := range resp.Results {
		fmt.Printf("%-11s %.3f seed=%d", r.Name, r.Score, r.SeedRank)
		for _, v := range r.Via {
			fmt.Printf("  via %s (%s %s, reverse=%v)", v.From, v.State, v.Type, v.Reverse)
		}
		fmt.Println()
	}
	// Output:
	// boil-water  1.000 seed=1  via fill-kettle (confirmed dependency, reverse=false)  via brew-tea (uncertain workflow, reverse=true)
	// fill-kettle 0.900 seed=0  via boil-water (confirmed dependency, reverse=true)
	// brew-tea    0.600 seed=2  via boil-water (uncertain workflow, reverse=false)
}
