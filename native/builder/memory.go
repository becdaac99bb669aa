package builder

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// pastRuns are the runs that carry a task text, as the memory of past tasks takes them: their
// known skills by id, failed or not, and the reporter of a reported run. None with NoTaskText.
func (b *builder) pastRuns() []engine.PastRun {
	if b.opt.NoTaskText {
		return nil
	}
	var out []engine.PastRun
	for _, tr := range b.opt.traces {
		if tr.Task == "" {
			continue
		}
		var ids []int
		for _, name := range tr.Skills {
			if id, ok := b.index[name]; ok {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			out = append(out, engine.PastRun{Task: tr.Task, Skills: ids, Failed: tr.Failed, Reporter: tr.Source})
		}
	}
	return out
}

// addMemory returns the artifact data (art encoded) with the memory of past tasks of runs,
// calibrated on the graph the data holds (engine.FitMemory); data itself when no word of their
// tasks is shared by enough runs or calibration silenced the memory (weight 0), which then
// costs the artifact nothing. Either way the build parameters say what the memory kept.
func (b *builder) addMemory(art *graphs.Artifact, data []byte, runs []engine.PastRun) ([]byte, error) {
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	m, st, err := engine.FitMemory(art, g, runs, engine.MemoryOptions{MinRuns: b.opt.TaskMinRuns, MinReporters: MinReporters})
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	b.rep.Memory = &st
	art.Params["memory"] = map[string]any{"runs": st.Runs, "tool_sets": st.Sets, "terms_kept": st.TermsKept,
		"terms_dropped": st.TermsDropped, "weight": st.Weight, "held_out": st.HeldOut}
	if m != nil && m.Weight > 0 {
		art.Memory = m
	}
	out, err := graphs.Encode(art)
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	return out, nil
}
