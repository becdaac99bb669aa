package synth

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/ingest"
)

// library is a base of b skills grown to n.
func library(t *testing.T, b, n int) []ingest.Skill {
	t.Helper()
	base := make([]ingest.Skill, b)
	for i := range base {
		base[i] = ingest.Skill{Name: fmt.Sprintf("skill-%02d", i), Description: fmt.Sprintf("Handle widget number %d carefully.", i)}
	}
	skills, err := Grow(base, n)
	if err != nil {
		t.Fatalf("growing %d skills to %d: %v", b, n, err)
	}
	return skills
}

// TestRuns checks the runs' count, ids and skills (distinct, of one variant group, 3 to 5 or
// the whole group when smaller), that the same arguments give the same runs and that another
// first gives others, and the errors.
func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		name             string
		base, size       int // the base library, the grown one
		n, first         int
		minLen, maxLen   int // skills per run
		wantFirstID, err string
	}{
		{name: "whole groups", base: 10, size: 40, n: 200, first: 0, minLen: 3, maxLen: 5, wantFirstID: "run-0"},
		{name: "short last group", base: 10, size: 33, n: 300, first: 7, minLen: 3, maxLen: 5, wantFirstID: "run-7"},
		{name: "groups of 2", base: 2, size: 6, n: 50, first: 0, minLen: 2, maxLen: 2, wantFirstID: "run-0"},
		{name: "library smaller than the base", base: 10, size: 4, n: 50, first: 2000, minLen: 3, maxLen: 4, wantFirstID: "run-2000"},
		{name: "no runs", base: 10, size: 40, n: 0},
		{name: "base 0", base: 0, size: 5, n: 3, err: "synth: base size 0 must be at least 1"},
		{name: "negative count", base: 5, size: 5, n: -1, err: "synth: -1 runs"},
		{name: "negative first", base: 5, size: 5, n: 1, first: -2, err: "synth: first run id -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skills := library(t, max(tc.base, 1), tc.size)
			runs, err := Runs(skills, tc.base, tc.n, tc.first)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err %v, want one starting %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != tc.n {
				t.Fatalf("%d runs, want %d", len(runs), tc.n)
			}
			group := map[string]int{}
			for k, s := range skills {
				group[s.Name] = k / tc.base
			}
			lengths := map[int]bool{}
			for r, run := range runs {
				if want := fmt.Sprintf("run-%d", tc.first+r); run.ID != want {
					t.Errorf("run %d is named %q, want %q", r, run.ID, want)
				}
				lengths[len(run.Skills)] = true
				if len(run.Skills) < tc.minLen || len(run.Skills) > tc.maxLen {
					t.Errorf("%s uses %d skills, want %d to %d", run.ID, len(run.Skills), tc.minLen, tc.maxLen)
				}
				seen := map[string]bool{}
				for _, name := range run.Skills {
					if seen[name] {
						t.Errorf("%s uses %s twice: %v", run.ID, name, run.Skills)
					}
					seen[name] = true
					if g, ok := group[name]; !ok || g != group[run.Skills[0]] {
						t.Errorf("%s mixes variant groups or names a skill not in the library: %v", run.ID, run.Skills)
					}
				}
			}
			if tc.n >= 50 && len(lengths) != tc.maxLen-tc.minLen+1 {
				t.Errorf("run lengths %v, want every one from %d to %d", lengths, tc.minLen, tc.maxLen)
			}
			if again, _ := Runs(skills, tc.base, tc.n, tc.first); !reflect.DeepEqual(again, runs) {
				t.Error("the same arguments gave other runs")
			}
			if tc.n > 0 {
				other, _ := Runs(skills, tc.base, tc.n, tc.first+1)
				same := 0
				for r := range runs {
					if reflect.DeepEqual(other[r].Skills, runs[r].Skills) {
						same++
					}
				}
				if same == tc.n && tc.minLen < len(skills) {
					t.Error("another first gave the same skills in every run")
				}
			}
		})
	}
	if _, err := Runs(nil, 5, 1, 0); err == nil || !strings.HasPrefix(err.Error(), "synth: ") {
		t.Errorf("runs over no library: err %v", err)
	}
}

// TestTaskRuns: runs with task text repeat workflows (the same sets whatever first is), carry
// words of their skills' descriptions and a reference number, and are deterministic.
func TestTaskRuns(t *testing.T) {
	skills := library(t, 10, 40)
	old, err := TaskRuns(skills, 10, 400, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	more, err := TaskRuns(skills, 10, 100, 400, 8)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]int{}
	for _, r := range old {
		sets[strings.Join(r.Skills, ",")]++
		words := strings.Fields(r.Task)
		if len(words) < 9 || len(words) > 14 || !strings.HasPrefix(words[len(words)-1], "ref") {
			t.Errorf("%s: task %q is not 8 to 13 words and a reference", r.ID, r.Task)
		}
	}
	if len(sets) > 8*5 {
		t.Errorf("%d distinct tool sets in 400 runs of 8 workflows", len(sets))
	}
	shared := 0
	for _, r := range more {
		if sets[strings.Join(r.Skills, ",")] > 0 {
			shared++
		}
	}
	if shared < len(more)/2 {
		t.Errorf("only %d of %d new runs repeat an old tool set", shared, len(more))
	}
	if again, _ := TaskRuns(skills, 10, 400, 0, 8); !reflect.DeepEqual(again, old) {
		t.Error("the same arguments gave other runs")
	}
	if _, err := TaskRuns(skills, 10, 1, 0, 0); err == nil {
		t.Error("no workflows: no error")
	}
}
