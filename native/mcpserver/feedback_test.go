package mcpserver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/mcpserver"
	"github.com/caskg/caskg/wasm/api"
)

func TestReportSkillUse(t *testing.T) {
	g := sample(t)
	store := &api.MemoryFeedback{}
	cs := connect(t, g, mcpserver.Options{Feedback: store})
	res := call(t, cs, "report_skill_use", map[string]any{"query": "heat some egg",
		"used": []string{"pick-up-object", "heat-object-in-microwave"}, "outcome": "success"})
	var out mcpserver.FeedbackOutput
	structured(t, res, &out)
	if out != (mcpserver.FeedbackOutput{Recorded: 2, Outcome: "success"}) {
		t.Errorf("result %+v, want 2 recorded, success", out)
	}
	if got := text(t, res); got != "Recorded: 2 skills used, success.\n" {
		t.Errorf("text %q", got)
	}
	want := []api.Feedback{{Query: "heat some egg", Used: []string{"pick-up-object", "heat-object-in-microwave"}, Outcome: "success"}}
	if !cmp.Equal(store.Reports(), want) {
		t.Errorf("stored %+v, want %+v", store.Reports(), want)
	}

	// Refused reports reach nothing.
	long := strings.Repeat("x", 100)
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown skill", map[string]any{"query": "egg", "used": []string{"pick-up-object", long}},
			`field "used": not skills of this artifact: "` + strings.Repeat("x", 40) + `…"`},
		{"bad outcome", map[string]any{"query": "egg", "used": []string{"pick-up-object"}, "outcome": "meh"},
			`field "outcome": "meh" is not "success" or "failure"`},
		{"blank query", map[string]any{"query": "  ", "used": []string{"pick-up-object"}}, `field "query": empty`},
		{"no query", map[string]any{"used": []string{"pick-up-object"}}, `field "query": required`},
		{"empty used", map[string]any{"query": "egg", "used": []string{}}, `field "used": empty`},
		{"used not an array", map[string]any{"query": "egg", "used": "pick-up-object"}, `field "used": must be an array of strings, not a string`},
		{"used a number", map[string]any{"query": "egg", "used": []any{"pick-up-object", 3}}, `field "used": element 1: must be a string, not a number`},
		{"too many", map[string]any{"query": "egg", "used": make([]string, api.MaxUsed+1)}, `field "used": 101 elements, at most 100`},
		{"unknown argument", map[string]any{"query": "egg", "used": []string{"pick-up-object"}, "task": "x"}, `unknown argument "task"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, call(t, cs, "report_skill_use", tt.args), tt.want)
		})
	}
	if len(store.Reports()) != 1 {
		t.Errorf("%d reports stored, want 1: a refused report must not be stored", len(store.Reports()))
	}
}

func TestReportSkillUseOff(t *testing.T) {
	cs := connect(t, sample(t), mcpserver.Options{})
	wantError(t, call(t, cs, "report_skill_use", map[string]any{"query": "egg", "used": []string{"pick-up-object"}}),
		"feedback is off on this server", "--feedback FILE")
}

func TestReportSkillUseStoreErrors(t *testing.T) {
	args := map[string]any{"query": "egg", "used": []string{"pick-up-object"}}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&api.RateLimitError{RetryAfter: 300 * time.Millisecond}, "too many feedback reports; retry in 1s"},
		{errors.New("disk full"), "feedback not recorded: disk full"},
	} {
		cs := connect(t, sample(t), mcpserver.Options{Feedback: &api.MemoryFeedback{Err: tt.err}})
		wantError(t, call(t, cs, "report_skill_use", args), tt.want)
	}
}
