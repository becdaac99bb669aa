package catalogserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs/jsontext"
)

// A Catalog is a tool catalog file read for serving: its tools as the server lists them, and
// notes on what in them is odd.
//
// Tools are served as the file gives them (name, title, description, schemas, annotations,
// _meta) with one exception: MCP and the SDK require an input schema of type "object", and an
// output schema must describe the object a result's structured content is. A schema that is
// not one is served in the smallest form that is (Note.Changed says which):
//
//   - input schema missing, null, or not a JSON object: {"type": "object"};
//   - no "type", or a type list or alias ("dict") that means an object: "type" set to "object";
//   - any other type: wrapped, {"type": "object", "properties": {"input": S}, "required": ["input"]}
//     (for an output schema the property is "result");
//   - output schema that is not a JSON object: dropped (results are then text).
//
// Property schemas are never rewritten. Non-standard type names in them ("int", "float",
// "bool", "list", "dict", "str") are read as the JSON Schema type they mean when calls are
// checked and results made, and get a Note with Changed false.
type Catalog struct {
	Tools []*mcp.Tool // in file order; names are unique
	Notes []Note
}

// A Note is something odd about one tool of a catalog.
type Note struct {
	Tool    string
	Field   string // "name", or a schema path such as "inputSchema.properties.when"
	Msg     string // what, in words stable enough to group by
	Changed bool   // whether the served tool differs from the file there
}

func (n Note) String() string {
	verb := "kept"
	if n.Changed {
		verb = "changed"
	}
	return fmt.Sprintf("tool %q %s: %s (%s)", n.Tool, n.Field, n.Msg, verb)
}

// Load reads a catalog file; see Parse.
func Load(file string) (*Catalog, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("catalogserver: %w", err)
	}
	return Parse(data, file)
}

// Parse reads a tool catalog: an MCP tools/list result {"tools": [...]} (also inside a
// JSON-RPC response's "result"), a JSON array of tools, or JSON Lines with one tool a line.
// file names the input in errors, which give the line of the offending tool. A catalog with no
// tools, a tool without a name or two tools with one name are errors.
func Parse(data []byte, file string) (*Catalog, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	vals, err := toolValues(data)
	if err != nil {
		return nil, fmt.Errorf("catalogserver: %s:%w", file, err)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("catalogserver: %s: no tools", file)
	}
	c := &Catalog{}
	lines := map[string]int{}
	index := newLineIndex(data)
	for i, v := range vals {
		line := index.line(v.off)
		t, notes, err := parseTool(v.data)
		if err != nil {
			return nil, fmt.Errorf("catalogserver: %s:%d: tool %d: %w", file, line, i+1, err)
		}
		if prev, ok := lines[t.Name]; ok {
			return nil, fmt.Errorf("catalogserver: %s:%d: tool %q repeats the tool of line %d", file, line, t.Name, prev)
		}
		lines[t.Name] = line
		c.Tools = append(c.Tools, t)
		c.Notes = append(c.Notes, notes...)
	}
	return c, nil
}

// A rawValue is a JSON value and the offset where it starts in the file.
type rawValue struct {
	data json.RawMessage
	off  int64
}

// toolValues finds the tool objects of a catalog in any of its formats; an error starts with
// the line it is on.
func toolValues(data []byte) ([]rawValue, error) {
	vals, err := values(data, 0)
	if err != nil {
		return nil, err
	}
	if len(vals) != 1 {
		return vals, nil // JSON Lines
	}
	doc := vals[0]
	switch jsontext.Kind(doc.data) {
	case "an array":
		return elements(doc)
	case "an object":
		var top map[string]json.RawMessage
		if err := json.Unmarshal(doc.data, &top); err != nil {
			return nil, fmt.Errorf("%d: %w", lineOf(data, doc.off), err)
		}
		if _, ok := top["tools"]; ok {
			return member(data, doc, "tools")
		}
		if r, ok := top["result"]; ok && jsontext.Kind(r) == "an object" {
			res, err := member(data, doc, "result")
			if err != nil {
				return nil, err
			}
			var inner map[string]json.RawMessage
			if json.Unmarshal(res[0].data, &inner) == nil && inner["tools"] != nil {
				return member(data, res[0], "tools")
			}
		}
		return vals, nil // one tool, as a one-line JSON Lines file
	}
	return nil, fmt.Errorf("%d: not a tool catalog (got %s): want {\"tools\": [...]}, an array of tools or one tool a line",
		lineOf(data, doc.off), jsontext.Kind(doc.data))
}

// values splits data into its successive JSON values.
func values(data []byte, base int64) ([]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []rawValue
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			// A truncated value is reported at its start, a syntax error where it is.
			off := dec.InputOffset()
			off += int64(len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n")))
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = se.Offset - 1
			}
			return nil, fmt.Errorf("%d: invalid json: %v", lineOf(data, max(off, 0)), err)
		}
		out = append(out, rawValue{v, base + dec.InputOffset() - int64(len(v))})
	}
}

// elements splits a JSON array into its elements.
func elements(arr rawValue) ([]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(arr.data))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []rawValue
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, rawValue{v, arr.off + dec.InputOffset() - int64(len(v))})
	}
	return out, nil
}

// member is the elements of obj's array member key, or for "result" the object itself.
func member(data []byte, obj rawValue, key string) ([]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(obj.data))
	dec.Token()
	var found *rawValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if tok == key { // the last of repeated keys wins, as in encoding/json
			found = &rawValue{v, obj.off + dec.InputOffset() - int64(len(v))}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%d: no %q", lineOf(data, obj.off), key)
	}
	if key == "result" {
		return []rawValue{*found}, nil
	}
	if k := jsontext.Kind(found.data); k != "an array" {
		return nil, fmt.Errorf("%d: %q is not an array (got %s)", lineOf(data, found.off), key, k)
	}
	return elements(*found)
}

func lineOf(data []byte, off int64) int {
	off = min(off, int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// lineIndex gives the lines of many offsets of one file without counting from the start
// each time (a 4,000-tool catalog would count gigabytes).
type lineIndex []int64 // offsets of the '\n' bytes

func newLineIndex(data []byte) lineIndex {
	var x lineIndex
	for i, c := range data {
		if c == '\n' {
			x = append(x, int64(i))
		}
	}
	return x
}

func (x lineIndex) line(off int64) int {
	n, _ := slices.BinarySearch(x, off)
	return n + 1
}

// parseTool reads one tool object and makes it servable.
func parseTool(raw json.RawMessage) (*mcp.Tool, []Note, error) {
	if k := jsontext.Kind(raw); k != "an object" {
		return nil, nil, fmt.Errorf("not an object (got %s)", k)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, err
	}
	var name string
	if json.Unmarshal(fields["name"], &name) != nil || strings.TrimSpace(name) == "" {
		return nil, nil, errors.New(`"name" missing or not a non-empty string`)
	}
	t := &mcp.Tool{}
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, nil, fmt.Errorf("%q: %v", name, err)
	}
	var notes []Note
	if msg := nameProblem(name); msg != "" {
		notes = append(notes, Note{Tool: name, Field: "name", Msg: msg})
	}
	var in []Note
	t.InputSchema, in = normalizeInput(t.InputSchema)
	outSchema, out := normalizeOutput(t.OutputSchema)
	t.OutputSchema = nil
	if outSchema != nil { // a nil map in the interface would be served as "outputSchema": null
		t.OutputSchema = outSchema
	}
	for _, n := range append(in, out...) {
		n.Tool = name
		notes = append(notes, n)
	}
	return t, notes, nil
}

// nameProblem says why name breaks the MCP tool name rules (1 to 128 characters of A-Z, a-z,
// 0-9, _, - and .), or "". The SDK logs such names and serves them, and so does this server.
func nameProblem(name string) string {
	if len(name) > 128 {
		return fmt.Sprintf("name longer than 128 characters (%d)", len(name))
	}
	if i := strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}); i >= 0 {
		return "name has characters MCP does not allow in tool names"
	}
	return ""
}

// normalizeInput makes an input schema servable (see Catalog).
func normalizeInput(v any) (map[string]any, []Note) {
	return normalizeSchema(v, "inputSchema", "input", true)
}

// normalizeOutput makes an output schema servable; nil means the tool has none.
func normalizeOutput(v any) (map[string]any, []Note) {
	return normalizeSchema(v, "outputSchema", "result", false)
}

func normalizeSchema(v any, field, wrapKey string, required bool) (map[string]any, []Note) {
	changed := func(msg string) []Note { return []Note{{Field: field, Msg: msg, Changed: true}} }
	s, ok := v.(map[string]any)
	if !ok {
		switch {
		case v == nil && !required:
			return nil, nil
		case v == nil:
			return map[string]any{"type": "object"}, changed(`missing; served as {"type": "object"}`)
		case !required:
			return nil, changed(fmt.Sprintf("not a schema object (got %s); dropped", kindOf(v)))
		}
		return map[string]any{"type": "object"}, changed(fmt.Sprintf(`not a schema object (got %s); served as {"type": "object"}`, kindOf(v)))
	}
	notes := typeNotes(s, field, 0)
	if s["type"] == "object" {
		return s, notes
	}
	ts := types(s)
	switch {
	case s["type"] == nil:
		notes = append(notes, changed(`no "type"; served with "type": "object"`)...)
	case slices.Contains(ts, "object"):
		notes = append(notes, changed(fmt.Sprintf(`"type" %s; served as "object"`, short(s["type"])))...)
	default:
		w := map[string]any{"type": "object", "properties": map[string]any{wrapKey: s}, "required": []any{wrapKey}}
		return w, append(notes, changed(fmt.Sprintf(`"type" %s is not an object; wrapped as property %q`, short(s["type"]), wrapKey))...)
	}
	c := make(map[string]any, len(s))
	for k, x := range s {
		c[k] = x
	}
	c["type"] = "object"
	return c, notes
}

// typeNotes notes the non-standard type names in a schema and its subschemas (properties,
// items, additionalProperties, compositions), down to maxDepth.
func typeNotes(s map[string]any, path string, depth int) []Note {
	if depth > maxDepth {
		return nil
	}
	var notes []Note
	var names []any
	switch t := s["type"].(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	}
	for _, n := range names {
		name, _ := n.(string)
		switch {
		case typeAliases[name] != "":
			notes = append(notes, Note{Field: path, Msg: fmt.Sprintf("type %q read as %q", name, typeAliases[name])})
		case !jsonTypes[name]:
			notes = append(notes, Note{Field: path, Msg: fmt.Sprintf("unknown type %s read as any type", short(n))})
		}
	}
	sub := func(v any, p string) {
		if m, ok := v.(map[string]any); ok {
			notes = append(notes, typeNotes(m, p, depth+1)...)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub(props[k], path+".properties."+k)
		}
	}
	sub(s["items"], path+".items")
	sub(s["additionalProperties"], path+".additionalProperties")
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok {
			for i, a := range alts {
				sub(a, fmt.Sprintf("%s.%s[%d]", path, k, i))
			}
		}
	}
	return notes
}
