package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/caskg/caskg/wasm/mcpcore"
)

// The output schemas mcpcore declares (and the edge worker lists) are those of the Go types
// caskg mcp's tools return, but for the words: the SDK checks every result against them.
func TestOutputSchemas(t *testing.T) {
	types := map[string]reflect.Type{
		mcpcore.GetSkill:  reflect.TypeFor[mcpcore.SkillText](),
		mcpcore.GraphInfo: reflect.TypeFor[mcpcore.Info](),
		mcpcore.Report:    reflect.TypeFor[mcpcore.FeedbackOutput](),
		mcpcore.Retrieve:  reflect.TypeFor[mcpcore.RetrieveOutput](),
		mcpcore.Neighbors: reflect.TypeFor[mcpcore.NeighborsOutput](),
	}
	for _, tool := range mcpcore.Tools {
		typ := types[tool.Name]
		if typ == nil {
			t.Errorf("%s: no output type", tool.Name)
			continue
		}
		s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var fromType, declared any
		if err := json.Unmarshal(b, &fromType); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tool.OutputSchema), &declared); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if !reflect.DeepEqual(words(fromType), words(declared)) {
			t.Errorf("%s: the output schema is not %s's:\ndeclared %s\nfrom the type %s", tool.Name, typ, tool.OutputSchema, b)
		}
	}
}

// words drops the descriptions of a schema.
func words(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "description" {
				out[k] = words(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = words(x)
		}
		return out
	}
	return v
}
