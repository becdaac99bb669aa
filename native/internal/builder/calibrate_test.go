package builder

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/table"
)

func TestPosterior(t *testing.T) {
	// post is posterior's α, β and mean for the evidence; want the same for α and β.
	post := func(evidence []float64) [3]float64 {
		a, b, c := posterior(evidence, 0.1)
		return [3]float64{a, b, c}
	}
	want := func(alpha, beta float64) [3]float64 { return [3]float64{alpha, beta, alpha / (alpha + beta)} }
	table.Run(t, "posterior", post, []table.Case[[]float64, [3]float64]{
		{"no evidence: the prior", nil, want(1, 1)},
		{"three certain yes", []float64{1, 1, 1}, want(4, 1)},
		{"three certain no", []float64{0, 0, 0}, want(1, 4)},
		// e = .9 → δ = .8 for; e = .3 → δ = .4 against; e = .5 → δ = ε_e = .1 against (z = [e > .5]).
		{"mixed", []float64{0.9, 0.3, 0.5}, want(1.8, 1.5)},
		// e = .52 → 2|e−.5| = .04 < ε_e, so δ = .1.
		{"weak evidence gets ε_e", []float64{0.52}, want(1.1, 1)},
	}, cmpopts.EquateApprox(0, 1e-12))
}

func TestStateOf(t *testing.T) {
	tests := []struct {
		c    float64
		want graphs.State
	}{
		{0.8, graphs.Confirmed}, {0.7, graphs.Uncertain}, {0.5, graphs.Uncertain},
		{0.3, graphs.Uncertain}, {0.29, graphs.Rejected}, {0.2, graphs.Rejected},
	}
	for _, tc := range tests {
		if got := stateOf(tc.c, 0.7, 0.3); got != tc.want {
			t.Errorf("StateOf(%v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestWeight(t *testing.T) {
	tests := []struct {
		name          string
		a, c, rho, eW float64
		want          float64
	}{
		{"confirmed takes the larger of A and c", 0.4, 0.8, 1, 0.01, 0.8},
		{"uncertain scales by .55", 0.6, 0.5, 0.55, 0.01, 0.33},
		{"scaffold scales A by .18", 0.5, 0, 0.18, 0.01, 0.09},
		{"floor ε_w", 0.01, 0, 0.18, 0.01, 0.01},
		{"ρ 0 still clips up to ε_w", 0.9, 0.9, 0, 0.01, 0.01},
	}
	for _, tc := range tests {
		if got := edgeWeight(tc.a, tc.c, tc.rho, tc.eW); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Weight = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestScaffold checks the caps: ≤ 4 out and ≤ 4 in per node, isolated nodes attached first.
func TestScaffold(t *testing.T) {
	opt := DefaultOptions()
	opt.RhoScaffold = 0.18 // the scaffold is off by default
	n := 8
	b := &builder{opt: opt, skills: make([]ingest.Skill, n)}
	var cands []edgeCandidate
	// Node 0 proposes an edge to every other node with descending A; node 7 has one weak
	// candidate edge only, which the scaffold must still pick to attach it.
	for j := 1; j < 7; j++ {
		cands = append(cands, edgeCandidate{Source: 0, Target: j, A: 0.9 - float64(j)/100, State: graphs.Unvalidated})
	}
	for i := 1; i < 7; i++ {
		cands = append(cands, edgeCandidate{Source: i, Target: 1 + i%6, A: 0.5, State: graphs.Unvalidated})
	}
	cands = append(cands, edgeCandidate{Source: 7, Target: 1, A: 0.01, State: graphs.Unvalidated})
	live := make([]bool, n)
	live[0], live[1] = true, true // a live edge 0 → 1 exists
	chosen := b.scaffold(cands, live, 1)
	out, in := map[int]int{}, map[int]int{}
	picked7 := false
	for _, k := range chosen {
		c := cands[k]
		out[c.Source]++
		in[c.Target]++
		picked7 = picked7 || c.Source == 7
	}
	for v := range n {
		if out[v] > 4 || in[v] > 4 {
			t.Errorf("node %d: %d out, %d in", v, out[v], in[v])
		}
	}
	if out[0] != 4 {
		t.Errorf("node 0 has %d scaffold edges out, want the cap 4", out[0])
	}
	if !picked7 {
		t.Error("the isolated node 7 was not attached")
	}
	if len(chosen) > max(4*n, 1) {
		t.Errorf("%d scaffold edges", len(chosen))
	}
	// A total limit of max(4N, live) caps the scaffold on a dense candidate set.
	b.opt.ScaffoldOut, b.opt.ScaffoldIn = 100, 100
	var dense []edgeCandidate
	for i := range n {
		for j := range n {
			if i != j {
				dense = append(dense, edgeCandidate{Source: i, Target: j, A: 0.5, State: graphs.Unvalidated})
			}
		}
	}
	if got := len(b.scaffold(dense, make([]bool, n), 0)); got != 4*n {
		t.Errorf("dense scaffold: %d edges, want max(4N, live) = %d", got, 4*n)
	}
}

// TestContractProber checks the offline probes on a hand-made chain: find → pick-up → heat,
// with a declared dependency, an I/O link with two suppliers and an unrelated skill.
func TestContractProber(t *testing.T) {
	skills := []ingest.Skill{
		{Name: "find-object", Description: "Locate an object.", Outputs: []ingest.Field{{Name: "object-location"}}},
		{Name: "heat-object", Description: "Heat a held object.", DependsOn: []string{"pick-up-object"},
			Inputs: []ingest.Field{{Name: "held-object"}}},
		{Name: "paint-wall", Description: "Paint a wall with a roller."},
		{Name: "pick-up-object", Description: "Pick up an object.",
			Inputs: []ingest.Field{{Name: "object-location"}}, Outputs: []ingest.Field{{Name: "held-object"}}},
		{Name: "take-object", Description: "Take an object out of a receptacle.", Outputs: []ingest.Field{{Name: "held-object"}}},
	}
	index := map[string]int{}
	for i, s := range skills {
		index[s.Name] = i
	}
	b := &builder{opt: DefaultOptions(), skills: skills, index: index, rep: &Report{}}
	b.feat, b.idf = extractFeatures(skills, index)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	p := contractProber{b}
	const find, heat, paint, pick, take = 0, 1, 2, 3, 4
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"removal: sole supplier of pick-up's input", p.removal(find, pick, p.needs(pick)), 1},
		{"removal: declared prerequisite", p.removal(pick, heat, p.needs(heat)), 1},
		{"removal: one of two suppliers of held-object", p.removal(take, heat, p.needs(heat)), 0.5},
		{"removal: supplies nothing", p.removal(paint, heat, p.needs(heat)), 0},
		{"substitution: the substitute supplies nothing", p.substitution(find, pick, paint, p.needs(pick)), 1},
		{"substitution: the substitute supplies as much", p.substitution(take, heat, pick, p.needs(heat)), 0},
		{"reorder: forward I/O only", p.reorder(find, pick), 1},
		{"reorder: backwards", p.reorder(pick, find), 0},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestContractProberProcedures checks the probes on the shapes of real tool suites: a search
// and a booking that return the same fields are ordered by their roles, optional inputs are not
// needs, and an input described as coming from another tool makes that tool a prerequisite no
// substitute can replace, however many other inputs the tool has.
func TestContractProberProcedures(t *testing.T) {
	in := func(name string, required bool, desc string) ingest.Field {
		return ingest.Field{Name: name, Required: required, Description: desc}
	}
	out := func(names ...string) []ingest.Field {
		var fs []ingest.Field
		for _, n := range names {
			fs = append(fs, ingest.Field{Name: n})
		}
		return fs
	}
	skills := []ingest.Skill{
		{Name: "Hotels_SearchHotel", Description: "Search for hotels in a city.",
			Inputs: []ingest.Field{in("location", true, "")}, Outputs: out("hotel_name", "location")},
		{Name: "Hotels_ReserveHotel", Description: "Reserve a room at a hotel.",
			Inputs:  []ingest.Field{in("hotel_name", true, ""), in("location", true, ""), in("check_in", true, ""), in("notes", false, "")},
			Outputs: out("hotel_name", "location")},
		{Name: "SkyScrapperSearchAirport", Description: "Find airports by name.",
			Inputs: []ingest.Field{in("query", true, "")}, Outputs: out("skyId", "entityId")},
		{Name: "SkyScrapperFlightSearch", Description: "Search flights on a route.",
			Inputs: []ingest.Field{in("originSkyId", true, "It can be extracted from the Search Airport API."),
				in("date", true, ""), in("returnDate", false, ""), in("adults", true, ""), in("cabinClass", true, ""),
				in("currency", true, "")}},
		{Name: "paint_wall", Description: "Paint a wall with a roller.", Outputs: out("colour")},
	}
	index := map[string]int{}
	for i, s := range skills {
		index[s.Name] = i
	}
	b := &builder{opt: DefaultOptions(), skills: skills, index: index, rep: &Report{}}
	b.feat, b.idf = extractFeatures(skills, index)
	b.keyMakers, b.keyTakers = countKeys(b.feat)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	p := contractProber{b}
	const search, reserve, airport, flights, paint = 0, 1, 2, 3, 4
	if got := b.feat[reserve].role; got != roleDeliver {
		t.Errorf("role of Hotels_ReserveHotel: %v, want deliver", got)
	}
	if got := len(p.needs(reserve)); got != 3 {
		t.Errorf("needs of Hotels_ReserveHotel: %d, want its 3 required inputs", got)
	}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"reorder: same fields both ways, search before booking", p.reorder(search, reserve), 1},
		{"reorder: booking before search", p.reorder(reserve, search), 0},
		{"substitution: declared source among six inputs", p.substitution(airport, flights, paint, p.needs(flights)), 1},
		{"removal: declared source", p.removal(airport, flights, p.needs(flights)), 1},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
