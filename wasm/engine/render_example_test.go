package engine_test

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

func ExampleEngine_Query_render() {
	skills := []graphs.Skill{
		{Name: "fill-kettle", Description: "Fill a kettle from the tap.", Source: "lib/fill-kettle/SKILL.md",
			Body: "1. Take the kettle to the sink.\n2. Fill it to the line."},
		{Name: "boil-water", Description: "Boil water on the stove.", Source: "lib/boil-water/SKILL.md",
			Body: "1. Put the kettle on the stove.\n2. Turn the stove on.\n3. Wait for the whistle."},
	}
	// newEngine is ExampleEngine_Query's: the artifact encoded, decoded and served.
	e := newEngine(skills, []graphs.Edge{
		{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency},
	})

	// 200 characters a skill leave room for boil-water's body only in part: it is cut at a
	// line break and marked.
	resp, err := e.Query(engine.Request{Query: "boil water", Render: true, SkillBudget: 200})
	if err != nil {
		panic(err)
	}
	fmt.Print(resp.Rendered)
	// Output:
	// 2 skills for this task, most relevant first.
	// Task: boil water
	// Why: a seed matches the task best; via graph: an edge from a seed raised the skill; a match matches the task below the seeds, no edge raised it. Under each skill, the edges that link it to the others, with calibration state and weight.
	// Text marked [… cut] goes on in the skill's source file.
	//
	// [1] boil-water (seed #1)
	// Boil water on the stove.
	// source: lib/boil-water/SKILL.md
	// - needs fill-kettle (confirmed dependency, w=0.90)
	//
	// 1. Put the kettle on the stove.
	// 2. Turn the stove on.
	// [… cut]
	//
	// [2] fill-kettle (via graph)
	// Fill a kettle from the tap.
	// source: lib/fill-kettle/SKILL.md
	// - needed by boil-water (confirmed dependency, w=0.90)
	//
	// 1. Take the kettle to the sink.
	// 2. Fill it to the line.
}
