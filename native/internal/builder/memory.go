package builder

import (
	"fmt"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

// corpus is the memory corpus of the build's runs that carry a task text (their known skills by
// id, failed or not, and the reporter of a reported run), numbered as the build's runs are: the
// earlier build's corpus with the new runs added in an update, every run's in a full build. Nil
// with NoTaskText, and when no run carries a task text.
func (b *builder) corpus() (*engine.MemoryCorpus, error) {
	if b.opt.NoTaskText {
		return nil, nil
	}
	c := engine.NewMemoryCorpus()
	if b.prev != nil && b.prev.corpus != nil {
		d := decodedCorpus{}
		if b.prev.corpusDone != nil {
			d = <-b.prev.corpusDone // decoded beside the other tables (reuse)
			b.prev.corpusDone = nil
		} else {
			d.c, d.err = engine.DecodeMemoryCorpus(b.prev.corpus, len(b.skills))
		}
		if d.err != nil {
			return nil, fmt.Errorf("builder: update: build state's memory corpus: %w", d.err)
		}
		c = d.c
	}
	for k := range b.opt.traces {
		tr := &b.opt.traces[k]
		if tr.Task == "" {
			continue
		}
		var ids []int
		for _, name := range tr.Skills {
			if id, ok := b.index[name]; ok {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		r := engine.PastRun{Task: tr.Task, Skills: ids, Failed: tr.Failed, Reporter: tr.Source}
		if err := c.Add(r, b.base+k, b.taskOf); err != nil {
			return nil, fmt.Errorf("builder: memory: %w", err)
		}
	}
	if c.Runs() == 0 {
		return nil, nil
	}
	return c, nil
}

// run is the build's run i: an earlier build's (the state's log) in an update, else its own.
func (b *builder) run(i int) (Trace, error) {
	if i < b.base {
		return b.prev.log.run(i)
	}
	return b.opt.traces[i-b.base], nil
}

// taskOf is the task text of run i.
func (b *builder) taskOf(i int) (string, error) {
	t, err := b.run(i)
	return t.Task, err
}

// addMemory returns the artifact data (art encoded, staged) with the memory of past tasks of
// the runs of corpus, calibrated on the graph the data holds (engine.FitMemory); without it when
// no word of their tasks is shared by enough runs or calibration silenced the memory (weight
// 0), which then costs the artifact nothing. Either way the build parameters say what the
// memory kept.
func (b *builder) addMemory(art *graphs.Artifact, staged *graphs.Staged, data []byte, corpus *engine.MemoryCorpus) ([]byte, error) {
	g, err := graphs.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	m, st, err := engine.FitMemory(art, g, corpus, b.taskOf, b.memoryOptions())
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	b.rep.Memory = &st
	art.Params["memory"] = map[string]any{"runs": st.Runs, "tool_sets": st.Sets, "terms_kept": st.TermsKept,
		"terms_dropped": st.TermsDropped, "weight": st.Weight, "held_out": st.HeldOut}
	if m != nil && m.Weight > 0 {
		art.Memory = m
	}
	out, err := staged.Encode(art.Memory, art.Params)
	if err != nil {
		return nil, fmt.Errorf("builder: memory: %w", err)
	}
	return out, nil
}

// memoryOptions are the options of the build's memory of past tasks.
func (b *builder) memoryOptions() engine.MemoryOptions {
	return engine.MemoryOptions{MinRuns: b.opt.TaskMinRuns, MinReporters: MinReporters}
}
