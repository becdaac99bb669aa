package builder

import (
	"regexp"
	"slices"
	"testing"

	"github.com/caskg/caskg/native/internal/ingest"
)

// featureBuilder is a builder holding just the features of skills and the counts of their
// declared keys: what the I/O signal reads.
func featureBuilder(skills []ingest.Skill) *builder {
	index := map[string]int{}
	for i, s := range skills {
		index[s.Name] = i
	}
	feat, idf := extractFeatures(skills, index)
	b := &builder{feat: feat, idf: idf}
	b.keyMakers, b.keyTakers = countKeys(feat)
	return b
}

// TestSenseAgreement checks that a match on a declared field name counts only when the two
// fields are about the same thing, read from a small library built through extractFeatures.
func TestSenseAgreement(t *testing.T) {
	field := func(name, desc string) []ingest.Field {
		return []ingest.Field{{Name: name, Description: desc, Required: true}}
	}
	skills := []ingest.Skill{
		{Name: "getStrengthProgram", Description: "Retrieve a strength and conditioning program",
			Outputs: field("program", "A strength and conditioning program for the individual")},
		{Name: "runQuantumProgram", Description: "Run a quantum computing program",
			Inputs: field("program", "The quantum computing program to be executed")},
		{Name: "createBrand", Description: "Create a brand",
			Outputs: field("brand_id", "The ID of the created brand")},
		{Name: "deleteBrand", Description: "Delete a brand",
			Inputs: field("brand_id", "The ID of the brand to delete")},
		{Name: "searchLocation", Description: "Search for locations by name",
			Outputs: field("geoId", "The unique identifier for the location")},
		{Name: "searchHotels", Description: "Search hotels in a location",
			Inputs: field("geoId", "Geo ID of the location from the location search")},
		{Name: "listPrograms", Description: "List programs",
			Outputs: field("program", "")},
	}
	b := featureBuilder(skills)
	feat := b.feat
	tests := []struct {
		out, in int
		want    string // "none", "full"
	}{
		{0, 1, "none"}, // program: fitness plan vs quantum circuit
		{2, 3, "full"}, // brand_id: both skills act on the brand
		{4, 5, "full"}, // geoId: both about a location
		{6, 1, "full"}, // no description: not judged
	}
	for _, tt := range tests {
		got := senseAgreement(feat[tt.out].outputs[0], feat[tt.in].inputs[0])
		switch {
		case tt.want == "none" && got != 0:
			t.Errorf("%s → %s: agreement %.3f, want 0", skills[tt.out].Name, skills[tt.in].Name, got)
		case tt.want == "full" && got != 1:
			t.Errorf("%s → %s: agreement %.3f, want 1", skills[tt.out].Name, skills[tt.in].Name, got)
		}
		if m := b.slotMatch(feat[tt.out].outputs[0], feat[tt.in].inputs[0]); (m == 0) != (tt.want == "none") {
			t.Errorf("%s → %s: slotMatch %.3f", skills[tt.out].Name, skills[tt.in].Name, m)
		}
	}
}

// TestPhiChannels checks that every channel has its own place in phis and that a channel that
// did not score a pair reads as absent.
func TestPhiChannels(t *testing.T) {
	var p phis
	for k, name := range channels {
		if got := channelIndex(name); got != k {
			t.Errorf("channelIndex(%q) = %d, want %d", name, got, k)
		}
		if _, ok := p.Lookup(name); ok {
			t.Errorf("%s: set before Set", name)
		}
		p.Set(name, float64(k)+0.5)
	}
	for k, name := range channels {
		if v, ok := p.Lookup(name); !ok || v != float64(k)+0.5 {
			t.Errorf("%s: got %v, %v", name, v, ok)
		}
	}
	p.Set("unknown", 1)
	if _, ok := p.Lookup("unknown"); ok {
		t.Error("an unknown channel reads as present")
	}
}

// identRE matches what identifiers finds.
var identRE = regexp.MustCompile(`[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+`)

// FuzzIdentifiers holds identifiers equal to identRE's matches on any text.
func FuzzIdentifiers(f *testing.F) {
	for _, s := range []string{"", "use get-weather first", "a--b", "a-b--c-d", "x_y_", "-a-b", "é-a-b_c", "a-b-", "A1_b2-C3 d4", "--", "a b-c\nd_e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var got []string
		identifiers(text, func(m string) { got = append(got, m) })
		want := identRE.FindAllString(text, -1)
		if !slices.Equal(got, want) {
			t.Fatalf("identifiers(%q) = %q, identRE finds %q", text, got, want)
		}
	})
}
