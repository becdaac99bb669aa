package catalogserver

import (
	"encoding/json"
	"testing"

	"github.com/caskg/caskg/native/testlib/table"
)

func TestValidate(t *testing.T) {
	const schema = `{"type": "object", "required": ["city", "n"], "properties": {
		"city": {"type": "string"}, "n": {"type": "int"}, "x": {"type": ["number", "null"]},
		"unit": {"enum": ["c", "f"]}, "tags": {"type": "list", "items": {"type": "string"}},
		"deep": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
		"fixed": {"const": 3}, "free": {}},
		"additionalProperties": false}`
	var s any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	// check is validate's message for the arguments args, "" for none.
	check := func(args string) string {
		var v any
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			return "not JSON: " + err.Error()
		}
		if err := validate(s, v, ""); err != nil {
			return err.Error()
		}
		return ""
	}
	table.Run(t, "validate", check, []table.Case[string, string]{
		{"valid", `{"city": "Oslo", "n": 2}`, ""},
		{"whole float is an integer", `{"city": "Oslo", "n": 2.0}`, ""},
		{"all", `{"city": "a", "n": 1, "x": null, "unit": "c", "tags": ["a"], "deep": {"ok": true}, "fixed": 3, "free": [1]}`, ""},
		{"missing", `{"city": "Oslo"}`, `argument "n": missing (required)`},
		{"wrong type", `{"city": 3, "n": 1}`, `argument "city": want string, got integer`},
		{"fraction for integer", `{"city": "a", "n": 1.5}`, `argument "n": want integer, got number`},
		{"type list", `{"city": "a", "n": 1, "x": "s"}`, `argument "x": want number or null, got string`},
		{"enum", `{"city": "a", "n": 1, "unit": "k"}`, `argument "unit": must be one of ["c","f"]`},
		{"const", `{"city": "a", "n": 1, "fixed": 4}`, `argument "fixed": must be 3`},
		{"item", `{"city": "a", "n": 1, "tags": ["a", 2]}`, `argument "tags[1]": want string, got integer`},
		{"nested required", `{"city": "a", "n": 1, "deep": {}}`, `argument "deep.ok": missing (required)`},
		{"unknown", `{"city": "a", "n": 1, "zzz": 1}`, `argument "zzz": unknown argument (no such property)`},
		{"first in name order", `{"city": 1, "n": "x"}`, `argument "city": want string, got integer`},
		{"not an object", `[1]`, `arguments: want object, got array`},
	})
}

func TestValidateSchemaForms(t *testing.T) {
	// A value is checked against a schema.
	type value struct{ schema, v any }
	ok := func(c value) bool { return validate(c.schema, c.v, "") == nil }
	table.Run(t, "validate", ok, []table.Case[value, bool]{
		{"true schema", value{true, "x"}, true},
		{"false schema", value{false, "x"}, false},
		{"no schema", value{nil, 1.0}, true},
		{"unknown type name", value{map[string]any{"type": "widget"}, 1.0}, true},
		{"additional schema", value{map[string]any{"additionalProperties": map[string]any{"type": "string"}}, map[string]any{"a": 1.0}}, false},
	})
}
