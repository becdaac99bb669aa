package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/export"
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
	File      string               `json:"file"`
	Version   string               `json:"version"`
	Bytes     int                  `json:"bytes"`
	Skills    int                  `json:"skills"`
	Edges     int                  `json:"edges"`
	Terms     int                  `json:"terms"`
	ByState   map[string]int       `json:"by_state"`
	ByType    map[string]int       `json:"by_type"`
	OutDegree degreeStats          `json:"out_degree"`
	InDegree  degreeStats          `json:"in_degree"`
	Isolated  int                  `json:"isolated"`
	Sections  []graphs.SectionInfo `json:"sections"`
	Params    json.RawMessage      `json:"params"`
}

func inspect(path string, g *graphs.Graph) inspection {
	maj, min := g.Version()
	in := inspection{File: path, Version: fmt.Sprintf("%d.%d", maj, min), Bytes: g.Size(),
		Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms(),
		ByState: map[string]int{}, ByType: map[string]int{}, Sections: g.Sections(), Params: g.Params()}
	for _, s := range graphs.States() {
		in.ByState[s.String()] = 0
	}
	for _, r := range graphs.Relations() {
		in.ByType[r.String()] = 0
	}
	out, inn := make([]int, g.NumSkills()), make([]int, g.NumSkills())
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		out[u] = hi - lo
		for e := lo; e < hi; e++ {
			inn[g.Target(e)]++
			in.ByState[g.State(e).String()]++
			in.ByType[g.Type(e).String()]++
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
	path, g, err := parseArtifact(c, fs, args, "ARTIFACT [--json]")
	if err != nil {
		return err
	}
	in := inspect(path, g)
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
	return w.Flush()
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
