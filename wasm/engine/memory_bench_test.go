package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

// refTask is one distinct task text of a tool set, with the runs that asked it.
type refTask struct {
	terms []string // its terms, in order, repeats kept
	runs  int
	last  int // index of its newest run
}

// refSet gathers one document: a tool set (failed runs apart) and its tasks.
type refSet struct {
	skills    []int
	failed    bool
	tasks     map[string]*refTask // task text → task
	reporters map[string]string   // reporter → its newest task text for this set
	repOrder  []string
	last      int
}

// buildMemoryReference is BuildMemory written the plain way, one map entry per task text
// and term: the memory BuildMemory must make, byte for byte.
func buildMemoryReference(runs []PastRun, opt MemoryOptions) (*graphs.Memory, MemoryStats) {
	opt = opt.orDefaults()
	var st MemoryStats
	sets := map[string]*refSet{}
	for i, r := range runs {
		task := strings.TrimSpace(r.Task)
		if task == "" || len(r.Skills) == 0 {
			st.NoTask++
			continue
		}
		ids := slices.Clone(r.Skills)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		key := setKey(ids, r.Failed)
		s := sets[key]
		if s == nil {
			s = &refSet{skills: ids, failed: r.Failed, tasks: map[string]*refTask{}, reporters: map[string]string{}}
			sets[key] = s
		}
		s.last = i
		if r.Reporter != "" {
			if _, ok := s.reporters[r.Reporter]; !ok {
				s.repOrder = append(s.repOrder, r.Reporter)
			}
			s.reporters[r.Reporter] = task
			continue
		}
		t := s.tasks[task]
		if t == nil {
			t = &refTask{terms: Tokenize(task)}
			s.tasks[task] = t
		}
		t.runs++
		t.last = i
	}
	keys := make([]string, 0, len(sets))
	for k := range sets {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	// The tasks each set keeps, and the tally of the privacy rule: distinct trusted texts and
	// distinct reporters per term.
	type kept struct {
		set   *refSet
		tasks []*refTask // trusted, newest first
		rep   [][]string // terms of each admitted reporter's task
		runs  int
	}
	var docs []kept
	texts := map[string]map[string]bool{} // term → trusted task texts
	reps := map[string]map[string]bool{}  // term → reporters
	for _, k := range keys {
		s := sets[k]
		d := kept{set: s}
		order := make([]string, 0, len(s.tasks))
		for text := range s.tasks {
			order = append(order, text)
		}
		slices.SortFunc(order, func(a, b string) int { return s.tasks[b].last - s.tasks[a].last })
		for j, text := range order {
			t := s.tasks[text]
			if j >= opt.PerSet {
				st.Capped += t.runs
				continue
			}
			d.tasks = append(d.tasks, t)
			d.runs += t.runs
			for _, term := range t.terms {
				if texts[term] == nil {
					texts[term] = map[string]bool{}
				}
				texts[term][text] = true
			}
		}
		if len(s.reporters) >= opt.MinReporters {
			for _, name := range s.repOrder {
				terms := Tokenize(s.reporters[name])
				d.rep = append(d.rep, terms)
				d.runs++
				for _, term := range terms {
					if reps[term] == nil {
						reps[term] = map[string]bool{}
					}
					reps[term][name] = true
				}
			}
		} else {
			st.Unagreed += len(s.reporters)
		}
		docs = append(docs, d)
	}
	keep := map[string]bool{}
	all := map[string]bool{}
	for term := range texts {
		all[term] = true
	}
	for term := range reps {
		all[term] = true
	}
	for term := range all {
		n := len(texts[term])
		if r := len(reps[term]); r >= opt.MinReporters {
			n += r
		}
		if n >= opt.MinRuns {
			keep[term] = true
		}
	}
	st.TermsKept, st.TermsDropped = len(keep), len(all)-len(keep)

	m := &graphs.Memory{K1: 1.2, B: 0.75, Depth: memDepth}
	post := map[string][]graphs.Posting{}
	var total float64
	for _, d := range docs {
		tf := map[string]float32{}
		for _, t := range d.tasks {
			for _, term := range t.terms {
				if keep[term] {
					tf[term]++
				}
			}
		}
		for _, terms := range d.rep {
			seen := map[string]bool{}
			for _, term := range terms {
				if keep[term] && !seen[term] {
					seen[term] = true
					tf[term]++ // a reporter's task counts a term once
				}
			}
		}
		if len(tf) == 0 || d.runs == 0 {
			continue
		}
		doc := uint32(len(m.Docs))
		var length float32
		for term, f := range tf {
			post[term] = append(post[term], graphs.Posting{Doc: doc, TF: f})
			length += f
		}
		ids := make([]uint32, len(d.set.skills))
		for i, id := range d.set.skills {
			ids[i] = uint32(id)
		}
		m.Docs = append(m.Docs, graphs.MemoryDoc{Len: length, Runs: d.runs, Failed: d.set.failed, Skills: ids})
		m.Runs += d.runs
		total += float64(length)
	}
	if len(m.Docs) == 0 {
		return nil, st
	}
	m.AvgDL = float32(total / float64(len(m.Docs)))
	for term := range post {
		m.Terms = append(m.Terms, term)
	}
	slices.Sort(m.Terms)
	m.Postings = make([][]graphs.Posting, len(m.Terms))
	for i, term := range m.Terms {
		m.Postings[i] = post[term] // documents were added in ascending order
	}
	st.Runs, st.Sets = m.Runs, len(m.Docs)
	return m, st
}

// memoryRuns are n runs over skills skills, deterministic in seed: tool sets of a few
// workflows (one in five failed), tasks drawn from per-workflow words and shared fillers,
// repeated task texts, runs without a task or skill, and reported runs from a few reporters.
func memoryRuns(n, skills, flows int, seed uint64) []PastRun {
	x := seed*0x9E3779B97F4A7C15 + 1
	next := func(m int) int {
		x = x*6364136223846793005 + 1442695040888963407
		return int(x>>33) % m
	}
	fillers := []string{"please", "help", "file", "data", "the", "report"}
	runs := make([]PastRun, n)
	for i := range runs {
		w := next(flows) * next(flows) / flows
		var r PastRun
		for k := range 2 + w%3 {
			r.Skills = append(r.Skills, (w*7+k*13+next(2)*(k/2))%skills)
		}
		words := 3 + next(5)
		task := ""
		for range words {
			if next(3) == 0 {
				task += fillers[next(len(fillers))] + " "
			} else {
				task += fmt.Sprintf("flow%dword%d ", w, next(6))
			}
		}
		if next(4) == 0 {
			task += fmt.Sprintf("ref%d", next(1000))
		}
		switch next(20) {
		case 0:
			task = ""
		case 1:
			r.Skills = nil
		case 2, 3:
			r.Reporter = fmt.Sprintf("agent-%d", next(4))
		}
		r.Failed = next(5) == 0
		r.Task = task
		runs[i] = r
	}
	return runs
}

// TestBuildMemoryReference: BuildMemory makes, byte for byte, the memory of the reference
// implementation (and the same statistics), with and without caps, reporters and thresholds.
func TestBuildMemoryReference(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, flows int
		opt      MemoryOptions
	}{
		{"defaults", 2000, 40, MemoryOptions{}},
		{"tight cap", 2000, 10, MemoryOptions{PerSet: 3}},
		{"one run a term, one reporter", 500, 30, MemoryOptions{MinRuns: 1, MinReporters: 1}},
		{"high threshold", 3000, 50, MemoryOptions{MinRuns: 20, MinReporters: 3}},
		{"few runs", 7, 3, MemoryOptions{}},
		{"no runs", 0, 1, MemoryOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := memoryRuns(tc.n, 60, tc.flows, uint64(tc.n))
			want, wantSt := buildMemoryReference(runs, tc.opt)
			got, gotSt := BuildMemory(runs, tc.opt)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("memory differs from the reference (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSt, gotSt); diff != "" {
				t.Errorf("statistics differ from the reference (-want +got):\n%s", diff)
			}
			if want == nil {
				if tc.n >= 500 {
					t.Fatal("no memory of runs whose tasks share words")
				}
				return
			}
			art := graphs.Artifact{Skills: make([]graphs.Skill, 60)}
			docs := make([]Doc, 60)
			for i := range art.Skills {
				art.Skills[i].Name = fmt.Sprintf("s%d", i)
				docs[i].Name = art.Skills[i].Name
			}
			art.Lexicon = BuildLexicon(docs)
			a, b := art, art
			a.Memory, b.Memory = want, got
			da, err := graphs.Encode(&a)
			if err != nil {
				t.Fatal(err)
			}
			db, err := graphs.Encode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if string(da) != string(db) {
				t.Error("the encoded artifacts differ")
			}
		})
	}
}

// TestMemoryFolds: a corpus's memory with runs left out is the memory of the other runs.
func TestMemoryFolds(t *testing.T) {
	runs := memoryRuns(1500, 60, 25, 9)
	c := newMemCorpus(runs)
	out := make([]bool, len(runs))
	var rest []PastRun
	for i, r := range runs {
		if i%7 == 3 && r.Reporter == "" {
			out[i] = true
			continue
		}
		rest = append(rest, r)
	}
	want, _ := buildMemoryReference(rest, MemoryOptions{}.orDefaults())
	got, _ := c.build(MemoryOptions{}.orDefaults(), out)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fold memory differs from the memory of the rest (-want +got):\n%s", diff)
	}
}

// TestMemoryFoldPatch: a fold's memory made from the build of every run (memCorpus.fold) is the
// memory build makes without the fold's runs, with caps, reporters and thresholds; and the patch
// does not give up on every fold.
func TestMemoryFoldPatch(t *testing.T) {
	patched := 0
	for _, tc := range []struct {
		name string
		seed uint64
		opt  MemoryOptions
	}{
		{"defaults", 1, MemoryOptions{}},
		{"small cap", 2, MemoryOptions{PerSet: 2}},
		{"cap 1, min runs 2", 3, MemoryOptions{PerSet: 1, MinRuns: 2}},
		{"min runs 6", 4, MemoryOptions{MinRuns: 6}},
		{"one reporter agrees", 5, MemoryOptions{MinReporters: 1, PerSet: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt.orDefaults()
			runs := memoryRuns(1200, 50, 30, tc.seed)
			c := newMemCorpus(runs)
			_, _, main := c.buildAll(opt, nil, true)
			setOf := map[int]int{}
			for i := range c.sets {
				for _, task := range c.sets[i].tasks {
					for _, r := range task.runs {
						setOf[int(r)] = i
					}
				}
			}
			for f, every := range []int{3, 7, 11, 29, 97, 300} {
				out := make([]bool, len(runs))
				var affected []int32
				for r := f; r < len(runs); r += every {
					if i, ok := setOf[r]; ok {
						out[r] = true
						affected = append(affected, int32(i))
					}
				}
				slices.Sort(affected)
				got, ok := c.fold(opt, main, out, slices.Compact(affected))
				if !ok {
					continue
				}
				patched++
				want, _ := c.build(opt, out)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("every %d: the patched fold differs from its build (-build +patched):\n%s", every, diff)
				}
				// The fold's index for some terms holds what the whole fold's index holds for them.
				var need []int32
				for term := range c.vocab {
					if term%3 != every%3 {
						need = append(need, int32(term))
					}
				}
				mainMem, _ := c.build(opt, nil)
				fi, ok := c.foldIndex(opt, main, mainMem, out, slices.Compact(affected), need)
				if !ok {
					t.Fatalf("every %d: the fold patched, its index not", every)
				}
				wi := recallIndexOf(want)
				if !slices.Equal(fi.runs, wi.runs) || !slices.Equal(fi.failed, wi.failed) || !slices.Equal(fi.soff, wi.soff) || !slices.Equal(fi.skills, wi.skills) {
					t.Fatalf("every %d: the fold's index has other documents than its memory", every)
				}
				inIndex := 0
				for _, term := range need {
					w := wi.find(c.vocab[term])
					f := fi.find(c.vocab[term])
					if (w < 0) != (f < 0) {
						t.Fatalf("every %d: term %q in the memory's index %v, in the fold's %v", every, c.vocab[term], w >= 0, f >= 0)
					}
					if w < 0 {
						continue
					}
					inIndex++
					if !slices.Equal(wi.doc[wi.off[w]:wi.off[w+1]], fi.doc[fi.off[f]:fi.off[f+1]]) ||
						!slices.Equal(wi.imp[wi.off[w]:wi.off[w+1]], fi.imp[fi.off[f]:fi.off[f+1]]) {
						t.Fatalf("every %d: term %q: postings differ", every, c.vocab[term])
					}
				}
				if inIndex == 0 || len(fi.terms) != inIndex {
					t.Fatalf("every %d: %d of the terms asked in the index, the fold's index holds %d", every, inIndex, len(fi.terms))
				}
			}
		})
	}
	t.Logf("%d of 30 folds patched", patched)
	if patched < 10 {
		t.Errorf("%d of 30 folds patched, want most", patched)
	}
}

// memoryEngine is an engine over skills skills whose memory holds n runs of memoryRuns over
// flows workflows, with the fusion weight 1, and the task texts of other runs of the same
// workflows to query it with.
func memoryEngine(b testing.TB, n, skills, flows int) (*Engine, []string) {
	b.Helper()
	art := flowArtifact(skills)
	m, _ := BuildMemory(memoryRuns(n, skills, flows, 1), MemoryOptions{})
	if m == nil {
		b.Fatal("no memory")
	}
	m.Weight = 1
	art.Memory = m
	e := artifactEngine(b, art)
	var queries []string
	for _, r := range memoryRuns(200, skills, flows, 2) {
		if r.Task != "" {
			queries = append(queries, r.Task)
		}
	}
	return e, queries
}

// flowArtifact is a library of skills skills, skill-0, skill-1, …, whose descriptions share
// words with the other skills of their workflow in memoryRuns, and its lexicon.
func flowArtifact(skills int) *graphs.Artifact {
	art := &graphs.Artifact{Skills: make([]graphs.Skill, skills)}
	for i := range art.Skills {
		art.Skills[i] = graphs.Skill{Name: fmt.Sprintf("skill-%d", i), Description: fmt.Sprintf("flow%dword%d tool number %d", i/7, i%6, i)}
	}
	art.Lexicon = lexicon(art.Skills)
	return art
}

// BenchmarkMemoryRecall is the memory's part of a query: analyzing the query and the nearest
// tool sets' votes, on a memory of 20,000 runs over 1,000 skills (2,000 workflows).
func BenchmarkMemoryRecall(b *testing.B) {
	e, queries := memoryEngine(b, 20000, 1000, 2000)
	b.Logf("%d tool sets, %d terms", len(e.mem.runs), len(e.mem.terms))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sc := e.getScratch()
		e.mem.recall(sc, e.analyze(sc, queries[i%len(queries)]))
		e.putScratch(sc)
	}
}

// BenchmarkQueryMemory is a whole query (k = 10) with the memory and without (Request.NoMemory)
// on the same engine as BenchmarkMemoryRecall.
func BenchmarkQueryMemory(b *testing.B) {
	e, queries := memoryEngine(b, 20000, 1000, 2000)
	for _, off := range []bool{false, true} {
		name := "memory"
		if off {
			name = "no-memory"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := e.Query(Request{Query: queries[i%len(queries)], K: 10, NoMemory: off}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuildMemory is BuildMemory of 20,000 runs over 1,000 skills.
func BenchmarkBuildMemory(b *testing.B) {
	runs := memoryRuns(20000, 1000, 2000, 1)
	b.ReportAllocs()
	for b.Loop() {
		BuildMemory(runs, MemoryOptions{})
	}
}

// BenchmarkMemoryRecallScale is BenchmarkMemoryRecall at 20,000 and 100,000 runs over 1,000
// skills (2,000 and 10,000 workflows), on the queries whose words are rare (their postings
// fewer than an eighth of the tool sets: recall's touched list) and on the rest (common words
// every other tool set shares: its pass over every tool set).
func BenchmarkMemoryRecallScale(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		e, queries := memoryEngine(b, n, 1000, n/10)
		var rare, common []string
		sc := e.getScratch()
		for _, q := range queries {
			np := 0
			for _, tk := range e.analyze(sc, q) {
				if t := e.mem.find(tk.text); t >= 0 {
					np += int(e.mem.off[t+1] - e.mem.off[t])
				}
			}
			if np*8 < len(e.mem.runs) {
				rare = append(rare, q)
			} else {
				common = append(common, q)
			}
		}
		e.putScratch(sc)
		for _, set := range []struct {
			name    string
			queries []string
		}{{"rare", rare}, {"common", common}} {
			b.Run(fmt.Sprintf("runs-%d/%s", n, set.name), func(b *testing.B) {
				b.Logf("%d tool sets, %d postings, %d queries", len(e.mem.runs), len(e.mem.doc), len(set.queries))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					sc := e.getScratch()
					e.mem.recall(sc, e.analyze(sc, set.queries[i%len(set.queries)]))
					e.putScratch(sc)
				}
			})
		}
	}
}
