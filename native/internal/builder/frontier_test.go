package builder

import (
	"context"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/table"
)

// paidProber stands for any prober that is not the free contract prober.
type paidProber struct{}

func (paidProber) Name() string { return "paid" }
func (paidProber) Probe(context.Context, []ingest.Skill, []Probe) ([]ProbeResult, error) {
	return nil, nil
}

func TestFrontierBudget(t *testing.T) {
	// A frontier is the budget and the prober of the build's options.
	type frontier struct {
		budget int
		prober Prober
	}
	budget := func(f frontier) int {
		opt := DefaultOptions()
		opt.Budget, opt.Prober = f.budget, f.prober
		return (&builder{opt: opt}).frontierBudget()
	}
	table.Run(t, "frontierBudget", budget, []table.Case[frontier, int]{
		{"auto with the contract prober: every candidate", frontier{BudgetAuto, nil}, 0},
		{"auto with a model prober: the model budget", frontier{BudgetAuto, paidProber{}}, modelBudget},
		{"explicit size with the contract prober", frontier{7, nil}, 7},
		{"explicit size with a model prober", frontier{7, paidProber{}}, 7},
		{"zero: every candidate", frontier{0, paidProber{}}, 0},
	})
	if DefaultOptions().Budget != BudgetAuto {
		t.Errorf("default budget %d, want BudgetAuto", DefaultOptions().Budget)
	}
	opt := DefaultOptions()
	opt.Budget = -2
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "budget -2") {
		t.Errorf("Validate(budget -2) = %v", err)
	}
}

// TestContractAbstains: the contract prober answers only about pairs something declared or
// recorded bears on, and an edge whose every probe abstains stays unvalidated.
func TestContractAbstains(t *testing.T) {
	skills := []ingest.Skill{
		{Name: "alpha-notes", Description: "Summarize meeting minutes."},
		{Name: "beta-slides", Description: "Design colourful slides."},
		{Name: "gamma-review", Description: "Review a document; run alpha-notes first."},
		{Name: "delta-report", Description: "Draft a yearly report."},
		{Name: "pick-up-object", Description: "Pick up an object.", Outputs: []ingest.Field{{Name: "held-object"}}},
		{Name: "heat-object", Description: "Heat a held object.", Inputs: []ingest.Field{{Name: "held-object"}}},
	}
	index := map[string]int{}
	for i, s := range skills {
		index[s.Name] = i
	}
	opt := DefaultOptions()
	b := &builder{opt: opt, skills: skills, index: index, rep: &Report{Calibrated: map[string]int{}}}
	b.feat, b.idf = extractFeatures(skills, index)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	b.traces, _ = newTraceStats([]Trace{{ID: "r", Skills: []string{"beta-slides", "delta-report"}}}, index)
	p := contractProber{b}
	tests := []struct {
		name string
		i, j int
		want bool
	}{
		{"nothing declared, mentioned or run together", 0, 1, false},
		{"nothing either way round", 1, 0, false},
		{"the target mentions the source", 0, 2, true},
		{"the source is mentioned by the target, reverse pair", 2, 0, true},
		{"runs used both", 1, 3, true},
		{"an output feeds an input", 4, 5, true},
	}
	for _, tc := range tests {
		if got := p.informed(tc.i, tc.j); got != tc.want {
			t.Errorf("%s: informed(%s, %s) = %v, want %v", tc.name, skills[tc.i].Name, skills[tc.j].Name, got, tc.want)
		}
	}
	cands := []edgeCandidate{{Source: 0, Target: 1, A: 0.3}, {Source: 0, Target: 2, A: 0.3}}
	if err := b.probe(context.Background(), cands, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	b.calibrate(cands)
	if cands[0].Probed || cands[0].State.String() != "unvalidated" || len(cands[0].Evidence) != 0 {
		t.Errorf("uninformed pair: probed %v, state %s, evidence %v; want unprobed and unvalidated",
			cands[0].Probed, cands[0].State, cands[0].Evidence)
	}
	if !cands[1].Probed || len(cands[1].Evidence) != 3 || cands[1].State.String() == "unvalidated" {
		t.Errorf("mentioned pair: probed %v, state %s, evidence %v", cands[1].Probed, cands[1].State, cands[1].Evidence)
	}
	if b.rep.ProbesAbstained != 3 || b.rep.ProbesRun != 3 {
		t.Errorf("report: %d abstained, %d run; want 3 and 3", b.rep.ProbesAbstained, b.rep.ProbesRun)
	}
}
