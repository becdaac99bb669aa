package testlib

import (
	"context"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
)

// What the tests outside native/ (the engine's, the hosts', the playground's) need of the
// native side, which lives under native/internal where Go lets only native/ import it. Each is
// the native call as a test there would write it; testlib is imported by _test.go files only.

// Task is one task of an evaluation file, as `caskg eval --tasks` reads it.
type Task = eval.Task

// ReadTasks reads the evaluation tasks in the JSON Lines file at path; with requireGold, a
// task without gold skills is an error.
func ReadTasks(path string, requireGold bool) ([]Task, error) {
	return eval.ReadTasks(path, requireGold)
}

// SampleGold is a gold edge set of the sample library: four of its dependencies, the first typed.
func SampleGold() []eval.GoldEdge {
	return []eval.GoldEdge{
		{Source: "find-object", Target: "pick-up-object", Type: "dependency"},
		{Source: "go-to-location", Target: "pick-up-object"},
		{Source: "pick-up-object", Target: "heat-object-in-microwave"},
		{Source: "pick-up-object", Target: "put-two-objects-in-receptacle"},
	}
}

// BuildPlain returns the artifact of the library folder dir built with the default options and
// no semantic model, as `caskg build --embedder none` writes it: of its first n skills when
// n > 0, of all of them otherwise. Unlike Build it builds on every call and returns the error,
// for fixtures made once per test binary.
func BuildPlain(dir string, n int) ([]byte, error) {
	lib, err := ingest.Load(dir)
	if err != nil {
		return nil, err
	}
	skills := lib.Skills
	if n > 0 && n < len(skills) {
		skills = skills[:n]
	}
	res, err := builder.Build(context.Background(), builder.Input{Skills: skills, Options: new(builder.DefaultOptions())})
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
}

// BuildGrown returns the artifact `caskg build dir` writes (Build's), of the library grown by the
// lab's generator (native/internal/lab/synth) to n skills when n > 0.
func BuildGrown(dir string, n int) ([]byte, error) {
	lib, err := ingest.Load(dir)
	if err != nil {
		return nil, err
	}
	skills := lib.Skills
	if n > 0 {
		if skills, err = synth.Grow(skills, n); err != nil {
			return nil, err
		}
	}
	res, err := builder.Build(context.Background(), builder.Input{Skills: skills})
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
}
