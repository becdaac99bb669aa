// Package eval scores retrieval against task sets with gold bundles and published graphs
// against gold dependency edges (formats: ../shared/data/README.md).
package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/native/internal/lines"
)

// Task is one line of a task file.
type Task struct {
	ID    string          `json:"id"`
	Query string          `json:"query"`
	Gold  []string        `json:"gold"`
	Main  string          `json:"main,omitempty"`
	Line  int             `json:"-"`
	RawID json.RawMessage `json:"-"` // the id exactly as written, string or number
}

// GoldEdge is one line of a gold edge file: Source supports or precedes Target.
type GoldEdge struct {
	Source string `json:"source"`
	Target string `json:"target"`
	Type   string `json:"type,omitempty"`
}

// flexID accepts a JSON string or number as an id.
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("id must be a string or a number")
	}
	*f = flexID(n.String())
	return nil
}

// readJSONL calls fn for every non-blank line of path with its 1-based number. An error from
// fn is reported with the file and line.
func readJSONL(path string, fn func(line int, data []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	return scanJSONL(f, path, fn)
}

// scanJSONL is readJSONL over a reader; name stands for it in errors.
func scanJSONL(r io.Reader, path string, fn func(line int, data []byte) error) error {
	if line, err := lines.Each(r, fn); err != nil {
		return fmt.Errorf("eval: %s:%d: %w", path, line, err)
	}
	return nil
}

// ReadTasks reads a task file. Every task needs an id and a non-empty query; requireGold also
// demands a non-empty gold list.
func ReadTasks(path string, requireGold bool) ([]Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	return ParseTasks(f, path, requireGold)
}

// ParseTasks reads tasks from r; name stands for it in errors.
func ParseTasks(r io.Reader, path string, requireGold bool) ([]Task, error) {
	var tasks []Task
	err := scanJSONL(r, path, func(line int, data []byte) error {
		var raw struct {
			ID    json.RawMessage `json:"id"`
			Query *string         `json:"query"`
			Gold  []string        `json:"gold"`
			Main  string          `json:"main"`
		}
		if i := jsontext.InvalidUTF8(data); i >= 0 {
			// encoding/json would read the byte as U+FFFD, and the query lose it unseen.
			return fmt.Errorf("not valid UTF-8: byte 0x%02x at column %d", data[i], i+1)
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return fmt.Errorf("not a JSON task: %w", err)
		}
		var id flexID
		switch {
		case raw.ID == nil || string(raw.ID) == "null":
			return fmt.Errorf("field \"id\" missing")
		case id.UnmarshalJSON(raw.ID) != nil:
			return fmt.Errorf("field \"id\": %s is not a string or a number", raw.ID)
		case raw.Query == nil || strings.TrimSpace(*raw.Query) == "":
			return fmt.Errorf("field \"query\" missing or empty")
		case requireGold && len(raw.Gold) == 0:
			return fmt.Errorf("field \"gold\" missing or empty")
		}
		tasks = append(tasks, Task{ID: string(id), RawID: raw.ID, Query: *raw.Query, Gold: raw.Gold, Main: raw.Main, Line: line})
		return nil
	})
	if err == nil && len(tasks) == 0 {
		err = fmt.Errorf("eval: %s: no tasks", path)
	}
	return tasks, err
}

// ReadGoldEdges reads a gold edge file.
func ReadGoldEdges(path string) ([]GoldEdge, error) {
	var edges []GoldEdge
	err := readJSONL(path, func(_ int, data []byte) error {
		e, err := DecodeGoldEdge(data)
		if err == nil {
			edges = append(edges, e)
		}
		return err
	})
	return edges, err
}

// DecodeGoldEdge decodes one line of a gold edge file; source and target are required.
func DecodeGoldEdge(data []byte) (GoldEdge, error) {
	var e GoldEdge
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("not a JSON edge {\"source\", \"target\"}: %w", err)
	}
	if e.Source == "" || e.Target == "" {
		return e, errors.New("fields \"source\" and \"target\" are required")
	}
	return e, nil
}

// Scores are the retrieval metrics of one task.
type Scores struct {
	Recall   map[int]float64 // R@k: share of gold in the top k
	Complete map[int]bool    // COMP@k: every gold item in the top k
	NDCG10   float64
}

// Score computes the metrics of one ranked list against gold at every cutoff in ks.
func Score(ranked []string, gold []string, ks []int) Scores {
	g := map[string]bool{}
	for _, x := range gold {
		g[x] = true
	}
	s := Scores{Recall: map[int]float64{}, Complete: map[int]bool{}}
	for _, k := range ks {
		found := 0
		seen := map[string]bool{}
		for _, r := range ranked[:min(k, len(ranked))] {
			if g[r] && !seen[r] {
				seen[r] = true
				found++
			}
		}
		if len(g) > 0 {
			s.Recall[k] = float64(found) / float64(len(g))
		}
		s.Complete[k] = found == len(g)
	}
	var dcg, ideal float64
	seen := map[string]bool{}
	for i, r := range ranked[:min(10, len(ranked))] {
		if g[r] && !seen[r] {
			seen[r] = true
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(10, len(g)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal > 0 {
		s.NDCG10 = dcg / ideal
	}
	return s
}

// Summary averages Scores over tasks.
type Summary struct {
	Tasks    int             `json:"tasks"`
	Recall   map[int]float64 `json:"recall"`
	Complete map[int]float64 `json:"complete"`
	NDCG10   float64         `json:"ndcg10"`
}

// Summarize averages per-task scores.
func Summarize(all []Scores, ks []int) Summary {
	s := Summary{Tasks: len(all), Recall: map[int]float64{}, Complete: map[int]float64{}}
	if len(all) == 0 {
		return s
	}
	for _, sc := range all {
		for _, k := range ks {
			s.Recall[k] += sc.Recall[k]
			if sc.Complete[k] {
				s.Complete[k]++
			}
		}
		s.NDCG10 += sc.NDCG10
	}
	n := float64(len(all))
	for _, k := range ks {
		s.Recall[k] /= n
		s.Complete[k] /= n
	}
	s.NDCG10 /= n
	return s
}

// EdgeScores are precision, recall and F1 of published edges against gold edges.
type EdgeScores struct {
	Published int     `json:"published"`
	Gold      int     `json:"gold"`
	Hits      int     `json:"hits"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// scoreEdges compares directed published edges with gold edges. Gold edges whose endpoints are
// not both in known are left out of the gold count (they could never be published).
func scoreEdges(published [][2]string, gold []GoldEdge, known map[string]bool) EdgeScores {
	g := map[[2]string]bool{}
	for _, e := range gold {
		if known == nil || (known[e.Source] && known[e.Target]) {
			g[[2]string{e.Source, e.Target}] = true
		}
	}
	s := EdgeScores{Published: len(published), Gold: len(g)}
	seen := map[[2]string]bool{}
	for _, e := range published {
		if g[e] && !seen[e] {
			seen[e] = true
			s.Hits++
		}
	}
	if s.Published > 0 {
		s.Precision = float64(s.Hits) / float64(s.Published)
	}
	if s.Gold > 0 {
		s.Recall = float64(s.Hits) / float64(s.Gold)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// MainScores are the metrics that need a task's main skill.
type MainScores struct {
	RR        float64 // reciprocal rank of the main skill in the whole ranking (0 when absent)
	Coverage  float64 // share of the other gold skills in the top k when main is there, else 0
	HasPrereq bool    // whether the task has gold skills besides main (Coverage is defined)
}

// ScoreMain computes the reciprocal rank of main and the prerequisite coverage at k: the share
// of the main skill's supporting gold skills retrieved along with it.
func ScoreMain(ranked []string, gold []string, main string, k int) MainScores {
	var s MainScores
	inTop := false
	for i, r := range ranked {
		if r == main {
			s.RR = 1 / float64(i+1)
			inTop = i < k
			break
		}
	}
	top := map[string]bool{}
	for _, r := range ranked[:min(k, len(ranked))] {
		top[r] = true
	}
	var others, found int
	for _, g := range gold {
		if g == main {
			continue
		}
		others++
		if top[g] {
			found++
		}
	}
	s.HasPrereq = others > 0
	if s.HasPrereq && inTop {
		s.Coverage = float64(found) / float64(others)
	}
	return s
}
