package catalogserver

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
)

// typeAliases are the non-standard type names real catalogs use (ToolLinkOS writes Python's),
// read as the JSON Schema type they mean. The served schema keeps the catalog's spelling.
var typeAliases = map[string]string{
	"int": "integer", "float": "number", "bool": "boolean", "list": "array", "dict": "object",
	"str": "string",
}

var jsonTypes = map[string]bool{
	"object": true, "array": true, "string": true, "integer": true, "number": true, "boolean": true,
	"null": true,
}

// typeName is the standard JSON Schema type t names, or "" for a name we do not know.
func typeName(t string) string {
	if a, ok := typeAliases[t]; ok {
		return a
	}
	if jsonTypes[t] {
		return t
	}
	return ""
}

// types lists the JSON Schema types a schema's "type" allows, in its order, aliases read as
// standard names; nil means any type (no "type", or only names we do not know).
func types(s map[string]any) []string {
	var out []string
	add := func(v any) {
		if name, ok := v.(string); ok {
			if t := typeName(name); t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	switch t := s["type"].(type) {
	case string:
		add(t)
	case []any:
		for _, e := range t {
			add(e)
		}
	}
	return out
}

// kindOf is the JSON type of a decoded JSON value; whole numbers are "integer".
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// hasType reports whether a value of kind k is one of the types ts.
func hasType(ts []string, k string) bool {
	return slices.Contains(ts, k) || k == "integer" && slices.Contains(ts, "number")
}

// An argError is a value that breaks its schema, at path (dotted property names and [i]
// indexes from the arguments object; "" is the arguments object itself).
type argError struct {
	path, msg string
}

func (e *argError) Error() string {
	if e.path == "" {
		return "arguments: " + e.msg
	}
	return fmt.Sprintf("argument %q: %s", e.path, e.msg)
}

// validate checks a decoded JSON value against the parts of a schema a tool's caller must get
// right: type, enum, const, required, properties, additionalProperties and items, recursively.
// Other keywords (patterns, bounds, compositions, $ref) are not checked. It reports the first
// problem, visiting object members in sorted order so that the answer is deterministic. The
// walk follows the value, so it ends however the schema nests.
func validate(schema any, v any, path string) *argError {
	s, ok := schema.(map[string]any)
	if !ok {
		if b, ok := schema.(bool); ok && !b {
			return &argError{path, "not allowed"}
		}
		return nil
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, v) {
		return &argError{path, "must be " + short(c)}
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		return &argError{path, "must be one of " + short(e)}
	}
	k := kindOf(v)
	if ts := types(s); ts != nil && !hasType(ts, k) {
		return &argError{path, fmt.Sprintf("want %s, got %s", strings.Join(ts, " or "), k)}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					if _, ok := v[name]; !ok {
						return &argError{join(path, name), "missing (required)"}
					}
				}
			}
		}
		for _, key := range slices.Sorted(maps.Keys(v)) {
			sub, known := props[key]
			if !known {
				switch ap := s["additionalProperties"].(type) {
				case bool:
					if !ap {
						return &argError{join(path, key), "unknown argument (no such property)"}
					}
					continue
				case map[string]any:
					sub = ap
				default:
					continue
				}
			}
			if err := validate(sub, v[key], join(path, key)); err != nil {
				return err
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range v {
				if err := validate(items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// short renders a JSON value for an error message, cut to 60 bytes.
func short(v any) string {
	b, err := marshal(v)
	if err != nil {
		return "?"
	}
	if len(b) > 60 {
		return strings.ToValidUTF8(string(b[:57]), "") + "..."
	}
	return string(b)
}
