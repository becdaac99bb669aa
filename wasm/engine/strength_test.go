package engine_test

import (
	"testing"

	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// TestMatchStrength checks that Response.Match is an absolute strength: a task the library
// answers is strong, one with several needs too though no one skill covers it, and one about
// what the library lacks is weak and says so, however its relative scores fall; that it does
// not depend on k; and that each result's Match is its Score times it.
func TestMatchStrength(t *testing.T) {
	sample := engineOf(t, testlib.Sample(t))
	mixed := engineOf(t, testlib.Multilingual(t))
	tests := []struct {
		name   string
		e      *engine.Engine
		query  string
		strong bool
	}{
		{"the library's own words", sample, "heat some egg in the microwave", true},
		{"a skill's name", sample, "boil-substance-on-stove", true},
		// make demo's two tasks; the first needs four skills, and its best one alone covers
		// a fifth of its weight.
		{"a task of several needs", sample, "heat some egg and put it in the garbage can", true},
		{"a science task", sample, "Your task is to determine if a metal fork is electrically conductive", true},
		{"Korean on the multilingual library", mixed, "날씨 예보", true},
		{"Chinese on the multilingual library", mixed, "北京明天的天气怎么样", true},
		{"physics the library lacks", sample, "quantum chromodynamics lattice", false},
		{"one known word among unknown ones", sample, "quantum chromodynamics lattice water", false},
		{"known words at random", sample, "purple elephant bicycle sandwich", false},
		{"unknown words", sample, "zzqx wvbk plorf", false},
		{"Chinese on an English library", sample, "北京明天的天气怎么样", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first float64
			for i, req := range []engine.Request{{Query: tt.query}, {Query: tt.query, K: 1}, {Query: tt.query, K: 30}, {Query: tt.query, NoGraph: true}} {
				resp, err := tt.e.Query(req)
				if err != nil {
					t.Fatal(err)
				}
				m := resp.Match
				if !(m >= 0 && m <= 1) {
					t.Fatalf("%+v: match %v outside [0, 1]", req, m)
				}
				if strong := m >= engine.WeakMatch; strong != tt.strong {
					t.Errorf("%+v: match %.3f, want strong %v", req, m, tt.strong)
				}
				if weak := resp.Note != ""; weak == tt.strong {
					t.Errorf("%+v: note %q with match %.3f", req, resp.Note, m)
				}
				if i == 0 {
					first = m
				} else if i < 3 && m != first {
					t.Errorf("k %d: match %v, %v at the default k", req.K, m, first)
				}
				for _, r := range resp.Results {
					if r.Match != r.Score*m {
						t.Errorf("%s: match %v, want score %v × %v", r.Name, r.Match, r.Score, m)
					}
				}
			}
		})
	}
}

// TestMinScore checks that min_score drops the results whose Match is below it, keeps the
// others in order, and is refused outside [0, 1].
func TestMinScore(t *testing.T) {
	e := engineOf(t, testlib.Sample(t))
	const task = "heat some egg and put it in the garbage can"
	all, err := e.Query(engine.Request{Query: task})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Results) < 3 {
		t.Fatalf("%d results", len(all.Results))
	}
	cut := all.Results[2].Match // keeps the first three, and any tied with the third
	for _, noGraph := range []bool{false, true} {
		ref, _ := e.Query(engine.Request{Query: task, NoGraph: noGraph})
		got, err := e.Query(engine.Request{Query: task, NoGraph: noGraph, MinScore: cut})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, r := range ref.Results {
			if r.Match >= cut {
				want++
			}
		}
		if want == 0 || want == len(ref.Results) || len(got.Results) != want {
			t.Errorf("no_graph %v: min_score %.3f kept %d of %d results, want %d", noGraph, cut, len(got.Results), len(ref.Results), want)
		}
		for i, r := range got.Results {
			if r.Name != ref.Results[i].Name {
				t.Errorf("no_graph %v: result %d is %s, want %s", noGraph, i+1, r.Name, ref.Results[i].Name)
			}
		}
	}
	weak, err := e.Query(engine.Request{Query: "purple elephant bicycle sandwich", MinScore: engine.WeakMatch})
	if err != nil || len(weak.Results) != 0 || weak.Note != engine.WeakMatchNote {
		t.Errorf("a weak answer at min_score %v: %d results, note %q, err %v", engine.WeakMatch, len(weak.Results), weak.Note, err)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		if _, err := e.Query(engine.Request{Query: task, MinScore: bad}); err == nil || err.Error() != `engine: field "min_score": `+errtext.Ftoa(bad)+` is outside [0, 1]` {
			t.Errorf("min_score %v: err %v", bad, err)
		}
	}
}

// TestSeedsHaveEvidence checks that a skill listed with next to no evidence is not called a
// seed: a Chinese weather query on the multilingual library finds one skill, and the rest of
// its list has a thousandth of its score.
func TestSeedsHaveEvidence(t *testing.T) {
	e := engineOf(t, testlib.Multilingual(t))
	for _, q := range []string{"北京明天的天气怎么样", "서울 날씨", "天气"} {
		for _, noGraph := range []bool{false, true} {
			resp, err := e.Query(engine.Request{Query: q, NoGraph: noGraph})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Results {
				if r.SeedRank > 0 && !(r.Score >= 0.01) {
					t.Errorf("%q no_graph %v: %s is seed #%d with score %.4f", q, noGraph, r.Name, r.SeedRank, r.Score)
				}
			}
		}
	}
}

// TestMatchStrengthMemory checks that words the memory of past tasks knows cover the query as
// the skills' own words do: a task in words no skill says ("zorblax ritual") is strong where
// past runs recalled its tools, and weak without the memory.
func TestMatchStrengthMemory(t *testing.T) {
	e := engineOf(t, testlib.SampleMemory(t))
	for _, tt := range []struct {
		noMemory bool
		strong   bool
	}{{false, true}, {true, false}} {
		resp, err := e.Query(engine.Request{Query: testlib.MemoryQuery, NoMemory: tt.noMemory})
		if err != nil {
			t.Fatal(err)
		}
		if strong := resp.Match >= engine.WeakMatch; strong != tt.strong {
			t.Errorf("no_memory %v: match %.3f, want strong %v", tt.noMemory, resp.Match, tt.strong)
		}
	}
}
