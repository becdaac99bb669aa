package mcpcore_test

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
)

// kitchen is an engine over the test kit's three-skill artifact, encoded on the spot with the
// lexicon caskg build would give it, and fill-kettle a prerequisite of boil-water.
func kitchen() *engine.Engine {
	g, err := graphs.Decode(testlib.Encode(&graphs.Artifact{Skills: testlib.Kitchen(),
		Edges: []graphs.Edge{{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency}}}))
	if err != nil {
		panic(err)
	}
	return engine.New(g)
}

// A transport (caskg mcp over the Go SDK, the edge worker's /mcp) lists Tools and hands each
// call's arguments to Core; the text and the structured result are the same on every surface.
func ExampleCore_Retrieve() {
	for _, t := range mcpcore.Tools {
		fmt.Println(t.Name, t.ReadOnly)
	}
	c := mcpcore.NewCore(kitchen())
	if err := mcpcore.CheckArgs(mcpcore.Retrieve, []byte(`{"query":"boil water","k":"two"}`)); err != nil {
		fmt.Println(err)
	}
	_, out, err := c.Retrieve(mcpcore.RetrieveArgs{Query: "boil water", K: 2})
	if err != nil {
		panic(err)
	}
	for _, s := range out.Results {
		fmt.Println(s.Rank, s.Name)
	}
	// Output:
	// get_skill true
	// graph_info true
	// report_skill_use false
	// retrieve_skills true
	// skill_neighbors true
	// field "k": must be an integer, not a string
	// 1 boil-water
	// 2 fill-kettle
}
