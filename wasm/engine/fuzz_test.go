package engine

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func FuzzQuery(f *testing.F) {
	for _, q := range []string{
		"boil", "boil boil dishes", "hot water for the tea", "pick the object", "micrwave",
		"heat it in the microwve", "kettel", "use pick_up_object", "use PickUpObject",
		"then run pick-up-object.", "call pick_up_objekt", "zzzz qqqq", "   ", "",
		"数据分析 café", "getHTTPResponseCode", "ab\xffcd", "a-b_c.d/e:f", "__--..//::",
		"帮我查询北京的天气", "서울 날씨 알려줘", "天気を調べる boil", "用Python查询_pick_up", "ＰＤＦ",
	} {
		f.Add(q, 0, 0, 0.0, false, "")
	}
	for _, req := range deterministicQueries {
		f.Add(req.Query, req.K, req.Seeds, req.Gamma, req.NoGraph, "")
	}
	f.Add("boil", 1, 1, 1.0, false, "")
	f.Add("boil", -1, 0, 0.0, false, "")
	f.Add("tea", MaxK, MaxSeeds, 1e-300, false, "")
	f.Add("tea", 3, 2, math.NaN(), true, "")
	// A glob narrows the answer to the skills it allows (filter.go).
	f.Add("boil water for tea", 3, 2, 0.0, false, "b*")
	f.Add("pick up the object", 0, 0, 0.0, true, "*object")
	f.Add("pick up the object", 0, 0, 0.0, false, "[a]")
	f.Add("mie", 0, 0, 0.0, false, "_"+strings.Repeat("\xff", MaxPatternBytes)) // too long, in bytes

	e := kitchen()
	n := e.Graph().NumSkills()
	f.Fuzz(func(t *testing.T, q string, k, seeds int, gamma float64, noGraph bool, glob string) {
		req := Request{Query: q, K: k, Seeds: seeds, Gamma: gamma, NoGraph: noGraph}
		if glob != "" {
			req.Filter.Allow = []string{glob}
		}
		resp, err := e.Query(req)

		wantK, wantSeeds := k, seeds
		if wantK == 0 {
			wantK = DefaultK
		}
		if wantSeeds == 0 {
			wantSeeds = DefaultSeeds
		}
		g := gamma
		if g == 0 {
			g = DefaultGamma
		}
		empty := strings.TrimSpace(q) == ""
		invalid := empty || len(q) > MaxQueryBytes || wantK < 1 || wantK > MaxK ||
			wantSeeds < 1 || wantSeeds > MaxSeeds || !(g > 0 && g <= 1) || len(glob) > MaxPatternBytes ||
			req.Filter.Check() != nil
		if invalid != (err != nil) {
			t.Fatalf("Query(%+v): error %v, want an error: %v", req, err, invalid)
		}
		if err != nil {
			if empty != errors.Is(err, ErrEmptyQuery) {
				t.Fatalf("Query(%+v): error %v; empty query: %v", req, err, empty)
			}
			return
		}

		res := resp.Results
		if len(res) > wantK || len(res) > n {
			t.Fatalf("%d results for k %d over %d skills", len(res), wantK, n)
		}
		seen := map[string]bool{}
		ranks := map[int]bool{}
		for i, r := range res {
			if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) || r.Score < 0 {
				t.Fatalf("result %s: score %v", r.Name, r.Score)
			}
			if seen[r.Name] {
				t.Fatalf("result %s twice", r.Name)
			}
			seen[r.Name] = true
			if glob != "" && !match(fold(glob), fold(r.Name)) { // filters fold case
				t.Fatalf("result %s: the filter's glob %q leaves it out", r.Name, glob)
			}
			if r.Name != e.Graph().Name(r.ID) {
				t.Fatalf("result id %d named %q, graph says %q", r.ID, r.Name, e.Graph().Name(r.ID))
			}
			if r.SeedRank < 0 || r.SeedRank > wantSeeds || r.SeedRank > 0 && ranks[r.SeedRank] {
				t.Fatalf("result %s: seed rank %d (seeds %d, seen %v)", r.Name, r.SeedRank, wantSeeds, ranks)
			}
			ranks[r.SeedRank] = r.SeedRank > 0
			if i > 0 && r.Score > res[i-1].Score {
				t.Fatalf("scores not descending: %v after %v", r.Score, res[i-1].Score)
			}
		}
		if len(res) > 0 && res[0].Score > 1+1e-9 {
			t.Fatalf("top score %v > 1 (seed and graph evidence are in [0, 1])", res[0].Score)
		}
		// The match strength is absolute, in [0, 1]; each result's is its score times it; and
		// min_score keeps exactly the results whose match reaches it, in their order.
		if !(resp.Match >= 0 && resp.Match <= 1) || resp.Match < WeakMatch && resp.Note == "" || resp.Match >= WeakMatch && resp.Note == WeakMatchNote {
			t.Fatalf("match %v, note %q", resp.Match, resp.Note)
		}
		for _, r := range res {
			if r.Match != r.Score*resp.Match {
				t.Fatalf("result %s: match %v, score %v times %v", r.Name, r.Match, r.Score, resp.Match)
			}
		}
		if len(res) > 1 {
			req.MinScore = res[len(res)/2].Match
			cut, err := e.Query(req)
			if err != nil {
				t.Fatalf("min_score %v: %v", req.MinScore, err)
			}
			if cut.Match != resp.Match || len(cut.Results) <= len(res)/2 || len(cut.Results) > len(res) {
				t.Fatalf("min_score %v: %d of %d results, match %v (was %v)", req.MinScore, len(cut.Results), len(res), cut.Match, resp.Match)
			}
			for i, r := range cut.Results {
				if r.Name != res[i].Name || r.Match < req.MinScore {
					t.Fatalf("min_score %v: result %d %s (match %v), was %s", req.MinScore, i+1, r.Name, r.Match, res[i].Name)
				}
			}
			if len(cut.Results) < len(res) && res[len(cut.Results)].Match >= req.MinScore {
				t.Fatalf("min_score %v dropped %s at match %v", req.MinScore, res[len(cut.Results)].Name, res[len(cut.Results)].Match)
			}
		}
	})
}
