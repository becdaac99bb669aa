package tracelog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
)

// Trace is one trace as caskg build --traces reads it (builder.ReadTraces), with the task the
// log gave where it had one.
type Trace struct {
	ID     string   `json:"id"`
	Task   string   `json:"task,omitempty"`
	Skills []string `json:"skills"`
}

// FormatStats counts what was read in one format. Calls = Exact + Normalized + Unmatched.
type FormatStats struct {
	Format     Format `json:"format"`
	Files      int    `json:"files"`
	Traces     int    `json:"traces"`
	Calls      int    `json:"calls"`
	Exact      int    `json:"exact"`
	Normalized int    `json:"normalized"`
	Unmatched  int    `json:"unmatched"`
}

// NameCount is a name a log called, how many times, and the skill it matched if any.
type NameCount struct {
	Name  string `json:"name"`
	Skill string `json:"skill,omitempty"`
	Count int    `json:"count"`
}

// Report is what an import read and wrote.
type Report struct {
	Formats []FormatStats `json:"formats"`
	Skipped int           `json:"skipped_records"` // objects of no known format
	// Problems are the records left out as unreadable, the first MaxProblems of them;
	// BadRecords counts them all.
	BadRecords int       `json:"bad_records"`
	Problems   []Problem `json:"problems,omitempty"`
	Written    int       `json:"traces_written"`
	Empty      int       `json:"traces_without_match"` // left out: no call matched a skill
	Collapsed  int       `json:"calls_collapsed"`      // consecutive repeats of a skill
	// The ten names most often called that matched no skill, and the ten normalized matches
	// most often made, most frequent first.
	Unmatched  []NameCount `json:"top_unmatched"`
	Normalized []NameCount `json:"top_normalized"`
}

// topN is how many names Report lists.
const topN = 10

// MaxProblems is how many problems Report lists.
const MaxProblems = 20

// MarshalJSON writes a problem as {"file", "line", "error"}.
func (p Problem) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		File string `json:"file"`
		Line int    `json:"line"`
		Err  string `json:"error"`
	}{p.File, p.Line, p.Err})
}

// An Importer turns log files into traces, one Add per file.
type Importer struct {
	m          *Matcher
	traces     []Trace
	stats      map[Format]*FormatStats
	unmatched  map[string]int
	normalized map[[2]string]int
	rep        Report
}

// NewImporter returns an Importer that matches calls with m.
func NewImporter(m *Matcher) *Importer {
	return &Importer{m: m, stats: map[Format]*FormatStats{}, unmatched: map[string]int{}, normalized: map[[2]string]int{}}
}

// Add parses one log file (see parseFile) and turns its logs into traces: each call matched to a
// skill, unmatched calls and consecutive repeats of a skill dropped. A log that matches no
// skill adds no trace. Bad records are left out and reported (Report.Problems); it returns them
// too, so a caller that wants none can refuse the file. The error is for a file parseFile cannot
// read at all, which adds nothing.
func (im *Importer) Add(name string, data []byte) ([]Problem, error) {
	parsed, err := parseFile(name, data)
	if err != nil {
		return nil, err
	}
	im.rep.Skipped += parsed.Skipped
	im.rep.BadRecords += len(parsed.Problems)
	for _, p := range parsed.Problems {
		if len(im.rep.Problems) < MaxProblems {
			im.rep.Problems = append(im.rep.Problems, p)
		}
	}
	seen := map[Format]bool{}
	for _, l := range parsed.Logs {
		st := im.stats[l.Format]
		if st == nil {
			st = &FormatStats{Format: l.Format}
			im.stats[l.Format] = st
		}
		if !seen[l.Format] {
			seen[l.Format] = true
			st.Files++
		}
		st.Traces++
		st.Calls += len(l.Calls)
		var skills []string
		for _, c := range l.Calls {
			s, how := im.match(c)
			switch how {
			case Exact:
				st.Exact++
			case Normalized:
				st.Normalized++
				im.normalized[[2]string{c, s}]++
			default:
				st.Unmatched++
				im.unmatched[c]++
				continue
			}
			if len(skills) > 0 && skills[len(skills)-1] == s {
				im.rep.Collapsed++
				continue
			}
			skills = append(skills, s)
		}
		if len(skills) == 0 {
			im.rep.Empty++
			continue
		}
		im.traces = append(im.traces, Trace{ID: l.ID, Task: l.Task, Skills: skills})
	}
	return parsed.Problems, nil
}

// match matches a call's name, and a name with spaces that matches nothing whole by its first
// word, which is how a slash command names its skill ("pdf extract tables").
func (im *Importer) match(c string) (string, How) {
	s, how := im.m.Match(c)
	if how == Unmatched && strings.ContainsFunc(c, unicode.IsSpace) {
		if f := strings.Fields(c); len(f) > 0 {
			if s, how = im.m.Match(f[0]); how == Exact {
				how = Normalized
			}
		}
	}
	return s, how
}

// Traces returns the traces added so far, in the order of the files and of the logs in them.
func (im *Importer) Traces() []Trace { return im.traces }

// Report returns the counts so far.
func (im *Importer) Report() Report {
	r := im.rep
	r.Formats = nil
	for _, f := range formats() {
		if st := im.stats[f]; st != nil {
			r.Formats = append(r.Formats, *st)
		}
	}
	r.Written = len(im.traces)
	r.Unmatched = nil
	for n, c := range im.unmatched {
		r.Unmatched = append(r.Unmatched, NameCount{Name: n, Count: c})
	}
	r.Normalized = nil
	for k, c := range im.normalized {
		r.Normalized = append(r.Normalized, NameCount{Name: k[0], Skill: k[1], Count: c})
	}
	r.Unmatched, r.Normalized = top(r.Unmatched), top(r.Normalized)
	return r
}

// top sorts by count, most first, then by name, and keeps topN.
func top(xs []NameCount) []NameCount {
	slices.SortFunc(xs, func(a, b NameCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return xs[:min(len(xs), topN)]
}

// Encode writes traces as JSONL, one trace a line.
func Encode(traces []Trace) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, t := range traces {
		_ = enc.Encode(t) // strings only: cannot fail
	}
	return b.Bytes()
}
