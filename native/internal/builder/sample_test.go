package builder

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/table"
)

func TestSampleFields(t *testing.T) {
	table.Run(t, "sampleFields", sampleFields, []table.Case[string, []string]{
		{"no sample", "Retrieve a film.", nil},
		{"a sample response", `Retrieve a film. Sample response: {"title": "Heat", "year": 1995}`, []string{"title", "year"}},
		{"nested, sorted, text after", `Sample: {"b": {"x": 1}, "a": [1, 2]} and more text after it`, []string{"a", "b"}},
		{"a placeholder brace is skipped", `Fill in {name} first. Sample response: {"id": "r1"}`, []string{"id"}},
		{"a repeated key once", `{"a": 1, "a": 2}`, []string{"a"}},
		{"no field", `Returns {}.`, nil},
		{"an array: its first object", `Returns [{"a": 1}, {"b": 2}].`, []string{"a"}},
		{"cut short", `Returns {"a": 1`, nil},
		{"a blank key is no field", `Returns {" ": 1, "ok": true}`, []string{"ok"}},
		{"past maxSampleTries", `{x} {y} {z} {w} {"id": 1}`, nil},
		{"the last try", `{x} {y} {z} {"id": 1}`, []string{"id"}},
	})
}

// TestSampleOutputs checks that induction reads a JSON sample of the result as the result's
// fields. Without it, an "add" endpoint was taken to produce what its name adds, and fed every
// input of that word: add_individual of an ontology API became a prerequisite of a kinship
// API's get_relations(individual).
func TestSampleOutputs(t *testing.T) {
	in := func(name string) []ingest.Field { return []ingest.Field{{Name: name, Required: true}} }
	skills := []ingest.Skill{
		{Name: "ontology_api_add_individual", Description: `Add an individual to an ontology class. Sample response: {"success": false}`},
		{Name: "kinship_api_get_relations", Description: `Retrieve the kinship relations of an individual. Sample response: {"relations": "complete"}`,
			Inputs: in("individual")},
		{Name: "film_api_search_films", Description: `Search films by title. Sample response: {"film_id": "f1", "title": "Heat"}`,
			Inputs: in("title")},
		{Name: "film_api_get_cast", Description: `Retrieve the cast of a film. Sample response: {"cast": ["a"]}`,
			Inputs: in("film_id")},
	}
	b := featureBuilder(skills)
	for _, c := range []struct {
		from, to int
		linked   bool
	}{
		{0, 1, false}, // add_individual returns success, not an individual
		{2, 3, true},  // search_films returns the film_id get_cast takes
		{3, 2, false},
	} {
		if got := b.io(c.from, c.to); (got > 0) != c.linked {
			t.Errorf("io(%s → %s) = %.3f, want linked %v", skills[c.from].Name, skills[c.to].Name, got, c.linked)
		}
	}
	// A declared output schema wins over a sample in the description.
	s := ingest.Skill{Name: "x_api_get_y", Description: `Sample response: {"z": 1}`, Outputs: in("y")}
	feat := featureBuilder([]ingest.Skill{s}).feat
	if len(feat[0].outputs) != 1 || feat[0].outputs[0].key != "y" {
		t.Errorf("outputs of a skill with an outputSchema and a sample: %+v, want its schema's y", feat[0].outputs)
	}
}

func FuzzSampleFields(f *testing.F) {
	for _, s := range []string{"", "{", `x {"a": 1}`, `{x} {"a": {"b": 2}}`, `{"": 1}`, `{"a": 1, "a": 2}`, `[{"a": 1}]`, `{{{{{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		keys := sampleFields(desc)
		if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
			t.Fatalf("sampleFields(%q) = %q: not sorted and distinct", desc, keys)
		}
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				t.Fatalf("sampleFields(%q): blank key", desc)
			}
			// Every key is written in the description (when no escape or invalid UTF-8 changes
			// how it reads).
			if utf8.ValidString(desc) && !strings.Contains(desc, `\`) && !strings.Contains(desc, `"`+k+`"`) {
				t.Fatalf("sampleFields(%q): key %q is not in the text", desc, k)
			}
		}
	})
}
