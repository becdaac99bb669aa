package catalogserver

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/caskg/caskg/native/testlib/table"
)

func ExampleExampleArgs() {
	schema := json.RawMessage(`{"type": "object", "required": ["city"], "properties": {
		"city": {"type": "string"}, "days": {"type": "integer", "minimum": 3},
		"unit": {"enum": ["celsius", "fahrenheit"]}, "when": {"type": "string", "format": "date"}}}`)
	args, _ := json.Marshal(ExampleArgs(schema))
	fmt.Println(string(args))
	// Output: {"city":"city-example","days":3,"unit":"celsius","when":"2020-01-01"}
}

func TestExampleArgs(t *testing.T) {
	// args is the JSON of ExampleArgs of the schema.
	args := func(schema string) string {
		got, err := json.Marshal(ExampleArgs(json.RawMessage(schema)))
		if err != nil {
			return err.Error()
		}
		return string(got)
	}
	table.Run(t, "ExampleArgs", args, []table.Case[string, string]{
		{"empty", `{"type": "object"}`, `{}`},
		{"not a schema", `"x"`, `{}`},
		{"wrapped", `{"type": "string"}`, `{"input":"input-example"}`},
		{"aliases", `{"type": "object", "properties": {"n": {"type": "int"}, "f": {"type": "float"}, "b": {"type": "bool"},
			"l": {"type": "list"}, "d": {"type": "dict"}}}`, `{"b":true,"d":{},"f":1.5,"l":["l-example"],"n":1}`},
		{"default", `{"properties": {"a": {"type": "number", "default": 7}, "b": {"type": "number", "default": "bad"}}}`, `{"a":7,"b":1.5}`},
		{"bounds", `{"properties": {"a": {"type": "integer", "exclusiveMinimum": 5}, "b": {"type": "number", "maximum": -2},
			"s": {"type": "string", "maxLength": 3}, "t": {"type": "string", "minLength": 15}}}`, `{"a":6,"b":-2,"s":"s-e","t":"t-examplexxxxxx"}`},
		{"nested", `{"properties": {"o": {"properties": {"p": {"type": "array", "minItems": 2, "items": {"type": "boolean"}}}}}}`,
			`{"o":{"p":[true,true]}}`},
		{"required without property", `{"type": "object", "required": ["k"], "additionalProperties": {"type": "integer"}}`, `{"k":1}`},
		{"ref", `{"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "integer"}}}`, `{"a":1}`},
		{"anyOf", `{"properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}`, `{"a":1}`},
		{"allOf", `{"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "null"}}}]}`, `{"a":1,"b":null}`},
	})
}

// TestDevSetSchemas: for every tool of every dev set, ExampleArgs passes the server's check,
// and the result of a call satisfies the output schema as an independent JSON Schema
// validator (the SDK's own) reads it.
func TestDevSetSchemas(t *testing.T) {
	if checkSchema(map[string]any{"type": "object", "required": []any{"a"}}, map[string]any{}) == nil {
		t.Fatal("checkSchema accepts an object without its required property")
	}
	for _, set := range devSets {
		t.Run(set, func(t *testing.T) {
			c := devCatalog(t, set)
			outputs := 0
			for _, tl := range c.Tools {
				in := tl.InputSchema.(map[string]any)
				args := ExampleArgs(in)
				if err := validate(in, args, ""); err != nil {
					t.Errorf("%s: example args %v: %v", tl.Name, args, err)
				}
				out, ok := tl.OutputSchema.(map[string]any)
				if !ok {
					continue
				}
				outputs++
				results := []any{result(out, 1), result(out, 0x9e3779b97f4a7c15), result(out, 1<<63+12345)}
				if err := checkSchema(out, results...); err != nil {
					t.Fatalf("%s: results %v: %v", tl.Name, results, err)
				}
			}
			if set != "toollinkos" && outputs != len(c.Tools) {
				t.Errorf("%d of %d tools have an output schema", outputs, len(c.Tools))
			}
		})
	}
}

// checkSchema validates values against schema with jsonschema-go.
func checkSchema(schema map[string]any, values ...any) error {
	data, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	for _, v := range values {
		// Validate the value as a client decodes it from the wire.
		data, err = json.Marshal(v)
		if err != nil {
			return err
		}
		var wire any
		if err := json.Unmarshal(data, &wire); err != nil {
			return err
		}
		if err := r.Validate(wire); err != nil {
			return err
		}
	}
	return nil
}

func TestResultVariesWithSeed(t *testing.T) {
	var out map[string]any
	json.Unmarshal([]byte(`{"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}}`), &out)
	a, b := result(out, 1), result(out, 2)
	if cmp.Equal(a, b) {
		t.Errorf("seeds 1 and 2 give the same result %v", a)
	}
	if !cmp.Equal(a, result(out, 1)) {
		t.Error("seed 1 gives two results")
	}
}

func TestDateOf(t *testing.T) {
	tests := []struct {
		day  int
		want string
	}{{0, "2020-01-01"}, {59, "2020-02-29"}, {60, "2020-03-01"}, {365, "2020-12-31"}, {366, "2021-01-01"}, {3649, "2029-12-28"}}
	for _, tt := range tests {
		if got := dateOf(tt.day); got != tt.want {
			t.Errorf("dateOf(%d) = %s, want %s", tt.day, got, tt.want)
		}
	}
}
