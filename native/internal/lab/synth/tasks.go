package synth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/caskg/caskg/native/internal/ingest"
)

// fillers are the words every kind of task is asked with: they recur across all workflows, so
// their memory postings are the longest, as a real gateway's "please" and "file" are.
var fillers = []string{"please", "help", "need", "quickly", "task", "project", "data", "file", "check", "make"}

// TaskRuns returns n runs with task text over skills, a library Grow made from a base library
// of base skills: the runs of a gateway whose agents repeat flows workflows in other words. The
// workflows are synth.Runs(skills, base, flows, 0) — 3 to 5 skills of one variant group —
// whatever first is, so that runs made with another first (new runs after old ones) repeat the
// same workflows. Run r picks a workflow, the low-numbered ones more often (the product of two
// uniform draws, so popularity falls off as in real traffic); one run in eight swaps one of its
// skills for another of the group. Its task text is 6 to 10 words drawn from the descriptions of
// the workflow's skills, 2 or 3 filler words common to every task, and a reference number of
// its own ("ref482913"), as a pasted ticket or file name, which no other run shares. The choices
// come from a 64-bit linear congruential generator seeded by first; the same arguments always
// give the same runs.
func TaskRuns(skills []ingest.Skill, base, n, first, flows int) ([]Run, error) {
	if flows < 1 {
		return nil, fmt.Errorf("synth: %d workflows: want at least 1", flows)
	}
	if n < 0 {
		return nil, fmt.Errorf("synth: %d runs: the count must not be negative", n)
	}
	if first < 0 {
		return nil, fmt.Errorf("synth: first run id %d must not be negative", first)
	}
	work, err := Runs(skills, base, flows, 0)
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(skills))
	for k, s := range skills {
		index[s.Name] = k
	}
	words := make([][]string, flows)
	for w, flow := range work {
		for _, name := range flow.Skills {
			for _, word := range strings.Fields(strings.ToLower(skills[index[name]].Description)) {
				if word = strings.Trim(word, ".,;:()[]{}\"'`!?"); len(word) > 3 {
					words[w] = append(words[w], word)
				}
			}
		}
		if len(words[w]) == 0 {
			words[w] = []string{strings.ToLower(flow.Skills[0])}
		}
	}
	next := lcg(uint64(first)*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D)
	out := make([]Run, 0, n)
	for r := range n {
		w := next(flows) * next(flows) / flows
		names := append([]string(nil), work[w].Skills...)
		if next(8) == 0 {
			k := index[names[0]]
			g := k / base
			size := min(base, len(skills)-g*base)
			alt := skills[g*base+next(size)].Name
			if !slices.Contains(names, alt) {
				names[next(len(names))] = alt
			}
		}
		var b strings.Builder
		text := words[w]
		for i, m := 0, 6+next(5); i < m; i++ {
			b.WriteString(text[next(len(text))])
			b.WriteByte(' ')
		}
		for i, m := 0, 2+next(2); i < m; i++ {
			b.WriteString(fillers[next(len(fillers))])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "ref%06d", next(1000000))
		out = append(out, Run{ID: fmt.Sprintf("run-%d", first+r), Skills: names, Task: b.String()})
	}
	return out, nil
}
