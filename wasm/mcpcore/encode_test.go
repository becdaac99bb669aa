package mcpcore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/wasm/engine"
)

// The worker writes Core's results by hand; caskg mcp has encoding/json write the same values.
// Each hand-written result must be the bytes encoding/json writes for it (graph_info's with
// its keys sorted, as the Go SDK's text content has them), so that a field added to a result
// type and not to its writer fails here.
func TestEncodeIsEncodingJSON(t *testing.T) {
	h := handler(t)
	c := h.core
	var outs []struct {
		name       string
		got, value any
	}
	add := func(name string, got []byte, value any) {
		outs = append(outs, struct {
			name       string
			got, value any
		}{name, got, value})
	}
	no := false
	for _, a := range []RetrieveArgs{
		{Query: "heat some egg"},
		{Query: "heat some egg", K: 20, Render: &no, NoGraph: true},
		{Query: "purple elephant bicycle sandwich", MinScore: 0.4},
	} {
		_, out, err := c.Retrieve(a)
		if err != nil {
			t.Fatal(err)
		}
		add("retrieve_skills "+a.Query, appendRetrieve(nil, out), out)
	}
	// Every optional member of a ranked skill, which the sample alone does not give.
	full := &RetrieveOutput{Query: "q", Results: []Skill{{Rank: 1, Name: "a", Score: 1, Match: 0.5, SeedRank: 2, Graph: true,
		Description: "d", Source: "s", Via: []engine.Via{{From: "b", State: "confirmed", Weight: 0.8, Type: "dependency", Reverse: true}},
		Recalled: &engine.Recall{Runs: 3, Terms: []string{"egg"}}}}, Match: 0.25, Note: "n"}
	add("retrieve_skills, every member", appendRetrieve(nil, full), full)
	for _, name := range []string{"pick-up-object", "heat-object-in-microwave"} {
		_, n, err := c.Neighbors(NeighborsArgs{Name: name, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		add("skill_neighbors "+name, appendNeighbors(nil, n), n)
		id, _ := c.names.Exact(name)
		_, s := c.Head(id, NoLibrary)
		add("get_skill "+name, appendSkillText(nil, s), s)
	}
	complete := &SkillText{Name: "a", Source: "lib/a/SKILL.md", Complete: true, Text: "# a\n"}
	add("get_skill, complete", appendSkillText(nil, complete), complete)
	for _, fb := range []*FeedbackOutput{{Recorded: 2}, {Recorded: 1, Outcome: "success"}} {
		add("report_skill_use", appendFeedback(nil, fb), fb)
	}
	params := c.g.Params()
	for _, lib := range []*LibraryInfo{nil, {Dir: "lib", Skills: 3, Served: 2, Problems: 1}} {
		info := c.Info("caskg.skg", lib)
		if err := json.Unmarshal(params, &info.Params); err != nil {
			t.Fatal(err)
		}
		info.VectorDim, info.VectorModel = 64, "m" // the sample has no vectors
		var sorted map[string]any                  // encoding/json sorts a map's keys
		b, _ := json.Marshal(info)
		if err := json.Unmarshal(b, &sorted); err != nil {
			t.Fatal(err)
		}
		add("graph_info", appendInfo(nil, info, params), sorted)
	}
	for _, o := range outs {
		want, err := json.Marshal(o.value)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.got.([]byte); !bytes.Equal(got, want) {
			t.Errorf("%s:\nwritten     %s\nencoding/json %s", o.name, got, want)
		}
	}
}

// The argument types are the tools' input schemas: each type's JSON members are the schema's
// properties, and the worker's decoders read a call's arguments into the value encoding/json
// (and so the Go SDK) reads from them.
func TestDecodeIsEncodingJSON(t *testing.T) {
	types := map[string]reflect.Type{
		Retrieve:  reflect.TypeFor[RetrieveArgs](),
		GetSkill:  reflect.TypeFor[NameArgs](),
		Neighbors: reflect.TypeFor[NeighborsArgs](),
		Report:    reflect.TypeFor[ReportArgs](),
		GraphInfo: reflect.TypeFor[struct{}](),
	}
	for _, tool := range Tools {
		var members []string
		for f := range types[tool.Name].Fields() {
			members = append(members, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		slices.Sort(members)
		if !slices.Equal(members, specs[tool.Name].names) {
			t.Errorf("%s: the argument type has %q, the input schema %q", tool.Name, members, specs[tool.Name].names)
		}
	}
	tests := []struct {
		tool, args string
		decode     func([]byte) (any, error)
		into       any
	}{
		{Retrieve, `{"query":"egg","k":3,"render":false,"skill_budget":10,"total_budget":20,"no_graph":true,"no_memory":true,` +
			`"min_score":0.5,"allow":["a*"],"deny":["b"],"namespaces":["c"]}`,
			func(b []byte) (any, error) { a, _, err := decodeRetrieve(b); return a, err }, &RetrieveArgs{}},
		{Retrieve, `{"query":"egg"}`, func(b []byte) (any, error) { a, _, err := decodeRetrieve(b); return a, err }, &RetrieveArgs{}},
		{Neighbors, `{"name":"x","limit":2}`, func(b []byte) (any, error) { return decodeName(b, Neighbors) }, &NeighborsArgs{}},
		{GetSkill, `{"name":"x"}`, func(b []byte) (any, error) { a, err := decodeName(b, GetSkill); return NameArgs{a.Name}, err }, &NameArgs{}},
		{Report, `{"query":"q","used":["a","b"],"outcome":"success"}`, func(b []byte) (any, error) { return decodeReport(b) }, &ReportArgs{}},
	}
	for _, tt := range tests {
		got, err := tt.decode([]byte(call(tt.tool, tt.args)))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.tool, tt.args, err)
		}
		if err := json.Unmarshal([]byte(tt.args), tt.into); err != nil {
			t.Fatal(err)
		}
		if want := reflect.ValueOf(tt.into).Elem().Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s:\ndecoded       %+v\nencoding/json %+v", tt.tool, tt.args, got, want)
		}
	}
}
