package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli/export"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
)

// degreeStats summarizes one degree distribution.
type degreeStats struct {
	Min    int     `json:"min"`
	Median int     `json:"median"`
	Mean   float64 `json:"mean"`
	P95    int     `json:"p95"`
	Max    int     `json:"max"`
	Zero   int     `json:"zero"` // nodes with degree 0
}

func stats(deg []int) degreeStats {
	if len(deg) == 0 {
		return degreeStats{}
	}
	s := slices.Clone(deg)
	slices.Sort(s)
	var sum, zero int
	for _, d := range s {
		sum += d
		if d == 0 {
			zero++
		}
	}
	return degreeStats{Min: s[0], Median: s[len(s)/2], Mean: float64(sum) / float64(len(s)),
		P95: s[min(len(s)-1, len(s)*95/100)], Max: s[len(s)-1], Zero: zero}
}

// inspection is what inspect reports.
type inspection struct {
	File           string               `json:"file"`
	mcpcore.Counts                      // graph_info's counts, the same fields in the same order
	OutDegree      degreeStats          `json:"out_degree"`
	InDegree       degreeStats          `json:"in_degree"`
	Isolated       int                  `json:"isolated"`
	Sections       []graphs.SectionInfo `json:"sections"`
	Params         json.RawMessage      `json:"params"`
	Learning       engine.Learning      `json:"learning"`
	Memory         *memoryInfo          `json:"memory,omitempty"` // when the build had runs with task text
}

// memoryParams are what the build parameters record of the memory of past tasks (builder,
// memory.go): the runs with task text, their distinct tool sets, the terms the privacy rule
// kept (shared by enough distinct tasks) and dropped, the calibrated weight and the runs held
// out to calibrate it.
type memoryParams struct {
	Runs         int     `json:"runs"`
	ToolSets     int     `json:"tool_sets"`
	TermsKept    int     `json:"terms_kept"`
	TermsDropped int     `json:"terms_dropped"`
	Weight       float64 `json:"weight"`
	HeldOut      int     `json:"held_out"`
}

// memoryInfo is what inspect says of the memory: only what the artifact holds. Bytes is 0 when
// calibration silenced the memory (weight 0) and the build left it out; its parameters remain.
type memoryInfo struct {
	Bytes int `json:"bytes"` // of its sections (mcpcore.MemoryBytes)
	memoryParams
	Terms []string `json:"terms,omitempty"` // the kept terms, with --memory-terms
}

// memoryOf reads g's memory for inspect, the kept terms too when terms is set; nil when the
// build had no runs with task text (no "memory" in the parameters, no memory sections).
func memoryOf(g *graphs.Graph, terms bool) *memoryInfo {
	var p struct {
		Memory *memoryParams `json:"memory"`
	}
	json.Unmarshal(g.Params(), &p) // unreadable parameters are shown as they are
	if p.Memory == nil && !g.HasMemory() {
		return nil
	}
	m := &memoryInfo{Bytes: mcpcore.MemoryBytes(g)}
	if p.Memory != nil {
		m.memoryParams = *p.Memory
	}
	if terms {
		m.Terms = make([]string, g.NumMemoryTerms())
		for i := range m.Terms {
			m.Terms[i] = g.MemoryTerm(i)
		}
	}
	return m
}

func inspect(path string, g *graphs.Graph) inspection {
	in := inspection{File: path, Counts: mcpcore.CountsOf(g), Sections: g.Sections(), Params: g.Params(),
		Learning: engine.LearningOf(g)}
	out, inn := make([]int, g.NumSkills()), make([]int, g.NumSkills())
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		out[u] = hi - lo
		for e := lo; e < hi; e++ {
			inn[g.Target(e)]++
		}
	}
	for u := range out {
		if out[u] == 0 && inn[u] == 0 {
			in.Isolated++
		}
	}
	in.OutDegree, in.InDegree = stats(out), stats(inn)
	return in
}

func runInspect(c *ctx, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print JSON")
	memTerms := fs.Bool("memory-terms", false, "list the terms the memory of past tasks kept (the words its past tasks shared)")
	learnedOut := fs.Bool("learned", false, "list every published edge learned from use (runs, feedback), with its evidence, from the build state")
	statePath := fs.String("state", "", "with --learned, the build state `file` (default ARTIFACT"+builder.StateSuffix+")")
	path, g, err := parseArtifact(c, fs, args, "ARTIFACT [--json] [--memory-terms] [--learned [--state FILE]]")
	if err != nil {
		return err
	}
	if *learnedOut {
		return runLearned(c, path, *statePath, g, *jsonOut)
	}
	if *statePath != "" {
		return usagef("--state needs --learned")
	}
	in := inspect(path, g)
	in.Memory = memoryOf(g, *memTerms)
	if *jsonOut {
		b, _ := json.MarshalIndent(in, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "artifact\t%s (format %s, %d bytes)\n", in.File, in.Version, in.Bytes)
	fmt.Fprintf(w, "skills\t%d (%d isolated)\n", in.Skills, in.Isolated)
	fmt.Fprintf(w, "edges\t%d\n", in.Edges)
	fmt.Fprintf(w, "lexicon\t%d terms\n", in.Terms)
	fmt.Fprintf(w, "learning\t%s\n", in.Learning.Note)
	if m := in.Memory; m != nil {
		fmt.Fprintf(w, "memory\t%s\n", m.summary())
		fmt.Fprintf(w, "\tterms: %d kept, %d dropped (shared by too few distinct tasks: the privacy rule)\n", m.TermsKept, m.TermsDropped)
	}
	fmt.Fprintln(w, "\nby state\t")
	for _, s := range graphs.States() {
		fmt.Fprintf(w, "  %s\t%d\n", s, in.ByState[s.String()])
	}
	fmt.Fprintln(w, "\nby relation\t")
	for _, r := range graphs.Relations() {
		fmt.Fprintf(w, "  %s\t%d\n", r, in.ByType[r.String()])
	}
	fmt.Fprintln(w, "\ndegree\tmin\tmedian\tmean\tp95\tmax\tzero")
	for _, d := range []struct {
		name string
		s    degreeStats
	}{{"out", in.OutDegree}, {"in", in.InDegree}} {
		fmt.Fprintf(w, "  %s\t%d\t%d\t%.2f\t%d\t%d\t%d\n", d.name, d.s.Min, d.s.Median, d.s.Mean, d.s.P95, d.s.Max, d.s.Zero)
	}
	fmt.Fprintln(w, "\nsection\toffset\tbytes")
	for _, s := range in.Sections {
		fmt.Fprintf(w, "  %s\t%d\t%d\n", s.Tag, s.Offset, s.Length)
	}
	fmt.Fprintf(w, "\nparams\t%s\n", in.Params)
	if err := w.Flush(); err != nil {
		return err
	}
	if m := in.Memory; m != nil && *memTerms {
		fmt.Fprintf(c.stdout, "\nmemory terms (%d, stemmed as the index keeps them): %s\n", len(m.Terms), strings.Join(m.Terms, ", "))
	}
	return nil
}

// summary is the memory's line in inspect's text.
func (m *memoryInfo) summary() string {
	s := fmt.Sprintf("%d runs, %d tool sets, weight %s", m.Runs, m.ToolSets, strconv.FormatFloat(m.Weight, 'g', -1, 64))
	if m.Bytes == 0 {
		return s + " (silent: calibration found no gain; the artifact holds no memory)"
	}
	return s + fmt.Sprintf(", %d bytes in its sections, %d held-out runs calibrated the weight", m.Bytes, m.HeldOut)
}

func runExport(c *ctx, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", "json", "output format: json, dot or graphml")
	out := fs.String("o", "", "write to `file` instead of standard output")
	pos, err := parse(c, fs, args, "ARTIFACT --format json|dot|graphml [-o FILE]")
	if err != nil {
		return err
	}
	if err := oneArtifact(pos); err != nil {
		return err
	}
	if !slices.Contains(export.Formats, *format) {
		return usagef("flag -format: unknown format %q (json, dot or graphml)", *format)
	}
	g, err := loadArtifact(pos[0])
	if err != nil {
		return err
	}
	if *out == "" {
		w := bufio.NewWriter(c.stdout)
		if err := export.Write(w, g, *format); err != nil {
			return err
		}
		return w.Flush()
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, g, *format); err != nil {
		return err
	}
	if err := atomicfile.Write(*out, buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	fmt.Fprintf(c.stderr, "wrote %s (%d bytes)\n", *out, buf.Len())
	return nil
}

// learnedEdge is a published edge learned from use, with the runs' evidence on it.
type learnedEdge struct {
	Source    string   `json:"source"`
	Target    string   `json:"target"`
	State     string   `json:"state"`
	Type      string   `json:"type"`
	Weight    float32  `json:"weight"`
	Runs      int      `json:"runs"`        // successful runs that used both
	Failed    int      `json:"failed_runs"` // failed runs of the target without the source
	Trusted   int      `json:"trusted_runs"`
	Distinct  int      `json:"distinct_reporters"`
	Reporters []string `json:"reporters"`
}

// learnedReport is what inspect --learned prints.
type learnedReport struct {
	Artifact string        `json:"artifact"`
	State    string        `json:"state"`
	Edges    int           `json:"edges"`
	Learned  []learnedEdge `json:"learned"`
	// Uncounted are the pairs runs used together that count for nothing: only reported, by
	// fewer than builder.MinReporters reporters.
	Uncounted    int `json:"uncounted_pairs"`
	MinReporters int `json:"min_reporters"`
}

// runLearned lists the artifact's edges learned from use. The artifact keeps no evidence: the
// runs are in its build state, which inspect reads (and checks is the artifact's) and counts as
// the build counted them (builder.LearnedFrom).
func runLearned(c *ctx, path, statePath string, g *graphs.Graph, jsonOut bool) error {
	if statePath == "" {
		statePath = path + builder.StateSuffix
	}
	raw, err := os.ReadFile(statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("inspect --learned: no build state %s: the artifact keeps no evidence of use, its build state does "+
			"(caskg build --state, caskg update and the gateway write one; --state names another file)", statePath)
	}
	if err != nil {
		return fmt.Errorf("inspect --learned: %w", err)
	}
	st, err := builder.DecodeState(raw)
	if err != nil {
		return fmt.Errorf("inspect --learned: %s: %w", statePath, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if sha256.Sum256(data) != st.Artifact {
		return fmt.Errorf("inspect --learned: the build state %s belongs to another artifact than %s", statePath, path)
	}
	if len(st.Skills) != g.NumSkills() {
		return fmt.Errorf("inspect --learned: the build state %s has %d skills, %s %d", statePath, len(st.Skills), path, g.NumSkills())
	}
	edge := map[[2]int]int{} // published edge by (source, target)
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			edge[[2]int{u, g.Target(e)}] = e
		}
	}
	index := make(map[string]int, len(st.Skills))
	for i, s := range st.Skills {
		index[s.Name] = i
	}
	rep := learnedReport{Artifact: path, State: statePath, Edges: g.NumEdges(), Learned: []learnedEdge{}, MinReporters: builder.MinReporters}
	learned, err := builder.LearnedFrom(st, func(int, int) bool { return true })
	if err != nil {
		return fmt.Errorf("inspect --learned: %s: %w", statePath, err)
	}
	for _, ev := range learned {
		if !ev.Counted {
			if ev.Source < ev.Target { // a pair, not each of its directions
				rep.Uncounted++
			}
			continue
		}
		e, ok := edge[[2]int{index[ev.Source], index[ev.Target]}]
		if !ok {
			continue
		}
		distinct := len(ev.Reporters)
		rep.Learned = append(rep.Learned, learnedEdge{Source: ev.Source, Target: ev.Target, State: g.State(e).String(),
			Type: g.Type(e).String(), Weight: g.Weight(e), Runs: ev.Runs, Failed: ev.Failed, Trusted: ev.Trusted,
			Distinct: distinct, Reporters: append([]string{}, ev.Reporters...)})
	}
	if jsonOut {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(c.stdout, "%d of %d edges learned from use (evidence from the build state %s; the artifact keeps none)\n",
		len(rep.Learned), rep.Edges, statePath)
	if len(rep.Learned) > 0 {
		w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "\nsource → target\tstate\ttype\tweight\truns\tfailed\ttrusted\treporters")
		for _, l := range rep.Learned {
			who := "-"
			if l.Distinct > 0 {
				who = fmt.Sprintf("%d: %s", l.Distinct, strings.Join(l.Reporters, ", "))
			}
			fmt.Fprintf(w, "%s → %s\t%s\t%s\t%.3f\t%d\t%d\t%d\t%s\n", l.Source, l.Target, l.State, l.Type, l.Weight, l.Runs, l.Failed, l.Trusted, who)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if rep.Uncounted > 0 {
		verb := "count"
		if rep.Uncounted == 1 {
			verb = "counts"
		}
		fmt.Fprintf(c.stdout, "\n%s used together only in runs of fewer than %d reporters %s for nothing until another reporter agrees\n",
			countOf(rep.Uncounted, "pair"), builder.MinReporters, verb)
	}
	return nil
}
