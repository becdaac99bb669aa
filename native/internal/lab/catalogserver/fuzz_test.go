package catalogserver

import (
	"encoding/json"
	"strings"
	"testing"
)

var schemaSeeds = []string{
	`{"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "format": "date"}}}`,
	`{"type": ["integer", "null"], "minimum": 5, "exclusiveMaximum": 5}`,
	`{"type": "array", "minItems": 1e300, "items": {"$ref": "#"}}`,
	`{"properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}, "c": {"$ref": "#"}}}`,
	`{"allOf": [{"$ref": "#"}, {"properties": {"x": {"allOf": [{"$ref": "#"}]}}}]}`,
	`{"anyOf": [true, {"type": "int"}]}`,
	`{"enum": []}`, `{"const": {"a": [1]}}`, `{"type": "dict", "additionalProperties": false, "required": ["x", 3]}`,
	`{"type": "string", "minLength": -1, "maxLength": -4}`, `{"items": [{"type": "bool"}, false]}`,
	`{"$ref": "#/definitions/a~1b"}`, `true`, `false`, `null`, `[]`, `"x"`, `3`,
}

// FuzzExampleArgs: no schema makes the generators panic, run long or answer differently twice;
// the result of a call is always an object.
func FuzzExampleArgs(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add(s, uint64(7))
	}
	f.Fuzz(func(t *testing.T, schema string, seed uint64) {
		var v any
		if json.Unmarshal([]byte(schema), &v) != nil {
			return
		}
		args := ExampleArgs(json.RawMessage(schema))
		a1, err := marshal(args)
		if err != nil {
			t.Fatalf("%s: arguments %v do not encode: %v", schema, args, err)
		}
		if a2, _ := marshal(ExampleArgs(v)); string(a1) != string(a2) {
			t.Fatalf("%s: arguments %s, then %s", schema, a1, a2)
		}
		in, _ := normalizeInput(v)
		validate(in, args, "")
		out, _ := normalizeOutput(v)
		if out == nil {
			return
		}
		r1, err := marshal(result(out, seed))
		if err != nil {
			t.Fatalf("%s: result does not encode: %v", schema, err)
		}
		if r2, _ := marshal(result(out, seed)); string(r1) != string(r2) || !strings.HasPrefix(string(r1), "{") {
			t.Fatalf("%s: result %s, then %s", schema, r1, r2)
		}
	})
}

// FuzzParse: no input makes Parse panic; what it accepts, a server serves.
func FuzzParse(f *testing.F) {
	f.Add(`{"tools": [{"name": "a", "inputSchema": {"type": "string"}, "outputSchema": 3}]}`)
	f.Add(`[{"name": "a"}, {"name": "b", "inputSchema": null}]`)
	f.Add("{\"name\": \"a\"}\n{\"name\": \"b\", \"annotations\": {\"readOnlyHint\": true}}\n")
	f.Add(`{"result": {"tools": [{"name": "a", "_meta": {"x": 1}}]}}`)
	f.Add(`[{"name": "a", "inputSchema": {"type": "object", "properties": {"p": {"type": "array", "x-mcp-header": "P"}}}}]`)
	for _, s := range schemaSeeds {
		f.Add(`[{"name": "t", "inputSchema": ` + s + `, "outputSchema": ` + s + `}]`)
	}
	f.Fuzz(func(t *testing.T, data string) {
		c, err := Parse([]byte(data), "f.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "catalogserver: f.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, tl := range c.Tools {
			if m, ok := tl.InputSchema.(map[string]any); !ok || m["type"] != "object" {
				t.Fatalf("%q: input schema %v is not an object schema", tl.Name, tl.InputSchema)
			}
			if tl.OutputSchema != nil {
				if m, ok := tl.OutputSchema.(map[string]any); !ok || m["type"] != "object" {
					t.Fatalf("%q: output schema %v is not an object schema", tl.Name, tl.OutputSchema)
				}
			}
		}
		if _, err := NewServer(c, Options{}); err != nil && !strings.Contains(err.Error(), "the SDK refuses it") {
			t.Fatal(err)
		}
	})
}
