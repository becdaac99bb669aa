package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/jsontext"
)

// maxSchemaDepth bounds how deep SchemaText follows nested schemas.
const maxSchemaDepth = 8

// ParseTools parses a JSON tool catalog: an MCP tools/list result {"tools":[...]}, the
// JSON-RPC response {"result":{"tools":[...]}}, or a bare array of tools. file names the file
// in Problems and Skill.Source. A syntax error skips the whole file with one Problem giving
// the line and column. It never panics.
func ParseTools(data []byte, file string) ([]Skill, []Problem) {
	entries, probs := parseTools(data, file)
	return skillsOf(entries), probs
}

// ParseToolsJSONL parses one tool a line (blank lines skipped). A line that is not valid JSON
// is skipped with a Problem; the other lines are kept. It never panics.
func ParseToolsJSONL(data []byte, file string) ([]Skill, []Problem) {
	entries, probs := parseToolsJSONL(data, file)
	return skillsOf(entries), probs
}

// rawValue is a JSON value with the byte offset where it starts in its file.
type rawValue struct {
	data json.RawMessage
	off  int64
}

func parseTools(data []byte, file string) ([]entry, []Problem) {
	data = bytes.TrimPrefix(data, bom)
	if p := utf8Problem(data, file); p != nil {
		return nil, []Problem{*p}
	}
	lines := newLineIndex(data)
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, []Problem{jsonProblem(err, file, lines)}
	}
	start := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
	tools, path, msg := findTools(rawValue{data[start:], start})
	if msg != "" {
		return nil, []Problem{{File: file, Line: lines.line(start), Msg: msg}}
	}
	// Where a line holds more than one tool (a catalog written on one line), a line number
	// does not tell them apart: their problems name the tool's place in the array too.
	perLine := map[int]int{}
	for _, t := range tools {
		perLine[lines.line(t.off)]++
	}
	var entries []entry
	var probs []Problem
	for i, t := range tools {
		line, at := lines.line(t.off), ""
		if perLine[line] > 1 {
			at = path + "[" + strconv.Itoa(i) + "]"
		}
		e, ps := parseTool(t.data, file, line, at)
		probs = append(probs, ps...)
		if e != nil {
			entries = append(entries, *e)
		}
	}
	return entries, probs
}

const toolsShape = `want {"tools":[...]}, {"result":{"tools":[...]}} or an array of tools`

// findTools finds the tool array in a valid JSON document, and its path in the document ("" for
// a bare array).
func findTools(doc rawValue) (tools []rawValue, path, msg string) {
	switch jsontext.Kind(doc.data) {
	case "an array":
		tools, msg = elements(doc)
		return tools, "", msg
	case "an object":
		// The object's "tools", or those of its "result" object (an MCP tools/list response).
		for path := "tools"; ; path = "result.tools" {
			m, err := members(doc)
			if err != nil {
				return nil, "", err.Error()
			}
			if t, ok := m["tools"]; ok {
				tools, msg = toolArray(t, path)
				return tools, path, msg
			}
			r, ok := m["result"]
			if path != "tools" || !ok || jsontext.Kind(r.data) != "an object" {
				return nil, "", `no "tools" array: ` + toolsShape
			}
			doc = r
		}
	}
	return nil, "", fmt.Sprintf("not a tool catalog (got %s): %s", jsontext.Kind(doc.data), toolsShape)
}

// toolArray is the elements of t, the member at path of the document, which must be an array.
func toolArray(t rawValue, path string) ([]rawValue, string) {
	if jsontext.Kind(t.data) != "an array" {
		return nil, fmt.Sprintf(`"%s" is not an array (got %s)`, path, jsontext.Kind(t.data))
	}
	return elements(t)
}

// elements splits a valid JSON array into its elements, with their offsets.
func elements(arr rawValue) ([]rawValue, string) {
	dec := json.NewDecoder(bytes.NewReader(arr.data))
	if _, err := dec.Token(); err != nil {
		return nil, "invalid json: " + err.Error()
	}
	var out []rawValue
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "invalid json: " + err.Error()
		}
		// The decoder stops right after a value, and v holds exactly its bytes.
		out = append(out, rawValue{v, arr.off + dec.InputOffset() - int64(len(v))})
	}
	return out, ""
}

// members splits a valid JSON object into its members, with their offsets; a repeated key
// keeps its last value, as encoding/json does.
func members(obj rawValue) (map[string]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(obj.data))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid json: %v", err)
	}
	out := map[string]rawValue{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid json: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("invalid json: object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid json: %v", err)
		}
		out[key] = rawValue{v, obj.off + dec.InputOffset() - int64(len(v))}
	}
	return out, nil
}

func parseToolsJSONL(data []byte, file string) ([]entry, []Problem) {
	data = bytes.TrimPrefix(data, bom)
	var entries []entry
	var probs []Problem
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if p := utf8Problem(line, file); p != nil {
			p.Line = n
			probs = append(probs, *p)
			continue
		}
		var v json.RawMessage
		if err := json.Unmarshal(line, &v); err != nil {
			p := jsonProblem(err, file, newLineIndex(line))
			p.Line = n
			probs = append(probs, p)
			continue
		}
		e, ps := parseTool(v, file, n, "")
		probs = append(probs, ps...)
		if e != nil {
			entries = append(entries, *e)
		}
	}
	return entries, probs
}

// jsonProblem describes a JSON decoding error of a whole file (or line), placing a syntax error.
func jsonProblem(err error, file string, lines lineIndex) Problem {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read up to and including the offending one.
		pos := se.Offset - 1
		if pos < 0 {
			pos = 0
		}
		line, col := lines.position(pos)
		return Problem{File: file, Line: line, Msg: fmt.Sprintf("invalid json at column %d: %s", col, se.Error())}
	}
	return Problem{File: file, Msg: "invalid json: " + err.Error()}
}

// lineIndex maps byte offsets to 1-based lines and columns.
type lineIndex struct {
	newlines []int64 // offsets of '\n' bytes
	size     int64
}

func newLineIndex(data []byte) lineIndex {
	var nl []int64
	for i, c := range data {
		if c == '\n' {
			nl = append(nl, int64(i))
		}
	}
	return lineIndex{nl, int64(len(data))}
}

func (x lineIndex) line(off int64) int {
	l, _ := x.position(off)
	return l
}

// position gives the line and byte column of offset off.
func (x lineIndex) position(off int64) (line, col int) {
	if off > x.size {
		off = x.size
	}
	i := sort.Search(len(x.newlines), func(i int) bool { return x.newlines[i] >= off })
	lineStart := int64(0)
	if i > 0 {
		lineStart = x.newlines[i-1] + 1
	}
	return i + 1, int(off-lineStart) + 1
}

// parseTool turns one MCP tool object into an entry; it returns nil when the tool is skipped.
// at, when not empty, is the tool's place in its array ("tools[3]"), which its problems' fields
// start with.
func parseTool(raw json.RawMessage, file string, line int, at string) (*entry, []Problem) {
	prob := func(field, name, msg string) Problem {
		return Problem{File: file, Line: line, Field: fieldAt(at, field), Skill: name, Msg: msg}
	}
	warn := func(field, name, msg string) Problem {
		p := prob(field, name, msg)
		p.Warning = true
		return p
	}
	if k := jsontext.Kind(raw); k != "an object" {
		return nil, []Problem{prob("", "", "tool entry is not an object (got "+k+")")}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, []Problem{prob("", "", "invalid json: "+err.Error())}
	}
	var probs []Problem
	failed := false
	s := Skill{Source: file, Path: file, Line: line, Kind: KindTool}
	name, msg := jsonString(obj, "name")
	if msg != "" {
		failed = true
		probs = append(probs, prob("name", "", msg))
	} else if skip, _ := checkName(name, KindTool); skip != "" {
		failed = true
		probs = append(probs, prob("name", name, skip))
	} else {
		s.Name = name
	}
	desc, msg := jsonString(obj, "description")
	if msg != "" {
		failed = true
		probs = append(probs, prob("description", s.Name, msg))
	} else {
		s.Description = desc
	}
	if failed {
		return nil, probs
	}
	if v, ok := obj["title"]; ok && jsontext.Kind(v) != "null" {
		var t string
		if json.Unmarshal(v, &t) != nil {
			probs = append(probs, warn("title", s.Name, "title is not a string (got "+jsontext.Kind(v)+"); ignored"))
		}
		s.Title = strings.TrimSpace(t)
	}
	var text []string
	for _, key := range []string{"inputSchema", "outputSchema"} {
		v, ok := obj[key]
		if !ok || jsontext.Kind(v) == "null" {
			continue
		}
		var schema map[string]any
		if jsontext.Kind(v) != "an object" || json.Unmarshal(v, &schema) != nil {
			probs = append(probs, warn(key, s.Name, "schema is not an object (got "+jsontext.Kind(v)+"); ignored"))
			continue
		}
		fields := schemaFields(schema)
		if key == "inputSchema" {
			s.Inputs = fields
		} else {
			s.Outputs = fields
		}
		schemaText(schema, 0, true, &text)
	}
	s.SchemaText = strings.Join(text, "\n")
	return &entry{skill: s, nameLine: line, at: at}, probs
}

// jsonString reads a required, non-empty string member; msg says what is wrong with it.
func jsonString(obj map[string]json.RawMessage, key string) (string, string) {
	v, ok := obj[key]
	if !ok || jsontext.Kind(v) == "null" {
		return "", "missing " + key
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", fmt.Sprintf("%s is not a string (got %s)", key, jsontext.Kind(v))
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", "empty " + key
	}
	return s, ""
}

// schemaFields lists a JSON schema's properties sorted by name.
func schemaFields(schema map[string]any) []Field {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	var out []Field
	for _, name := range sortedKeys(props) {
		f := Field{Name: name, Required: required[name]}
		if p, ok := props[name].(map[string]any); ok {
			f.Type = schemaType(p["type"])
			f.Description = flat(p["description"])
		}
		out = append(out, f)
	}
	return out
}

// schemaType renders a schema "type": a string, or a list of strings joined by "|".
func schemaType(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		var alts []string
		for _, a := range t {
			if s, ok := a.(string); ok {
				alts = append(alts, s)
			}
		}
		return strings.Join(alts, "|")
	}
	return ""
}

// schemaText appends a line "name: description" for each property of a schema, recursing into
// nested properties, items, additionalProperties and anyOf/oneOf/allOf down to maxSchemaDepth;
// withDesc adds the schema's own description (for schemas that are not a property).
func schemaText(s any, depth int, withDesc bool, out *[]string) {
	if depth > maxSchemaDepth {
		return
	}
	switch s := s.(type) {
	case []any:
		for _, sub := range s {
			schemaText(sub, depth+1, true, out)
		}
	case map[string]any:
		if withDesc {
			if d := flat(s["description"]); d != "" {
				*out = append(*out, d)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for _, name := range sortedKeys(props) {
			line := strings.Join(strings.Fields(name), " ")
			if p, ok := props[name].(map[string]any); ok {
				if d := flat(p["description"]); d != "" {
					line += ": " + d
				}
			}
			if line != "" {
				*out = append(*out, line)
			}
			schemaText(props[name], depth+1, false, out)
		}
		for _, key := range []string{"items", "additionalProperties", "anyOf", "oneOf", "allOf"} {
			if sub, ok := s[key]; ok {
				schemaText(sub, depth+1, true, out)
			}
		}
	}
}

// flat returns a string value with its whitespace runs collapsed, or "" for other values.
func flat(v any) string {
	s, _ := v.(string)
	return strings.Join(strings.Fields(s), " ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
