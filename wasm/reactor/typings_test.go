package main

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/wasm/engine"
)

// The typings of the JS module (wasm/js/caskg.d.ts) describe this module's JSON: the request
// and response of query (engine.Request, engine.Response), info and version. TestTypings holds
// them to the Go side, so that a field added in Go fails here until the typings have it.

const typingsPath = "../js/caskg.d.ts"

// A jsonField is a member of a JSON object as the Go side reads or writes it: its name, whether
// it may be absent, and the TypeScript type of its values.
type jsonField struct {
	name     string
	optional bool
	ts       string
}

// A tsMember is a property of a TypeScript interface or object type.
type tsMember struct {
	optional bool
	typ      string
}

// stripComments removes // and /* */ comments from TypeScript source, outside string literals.
func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src)-1)
			b.WriteString(src[i : j+1])
			i = j
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += 2 + end + 1
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitTop splits s at sep where no bracket ( { [ < is open; "=>" closes nothing.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{' || c == '(' || c == '[' || c == '<':
			depth++
		case c == '}' || c == ')' || c == ']' || (c == '>' && (i == 0 || s[i-1] != '=')):
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// parseMembers reads the properties of an object type's body (between its braces). Index
// signatures and methods describe no JSON field and are left out.
func parseMembers(body string) (map[string]tsMember, error) {
	members := map[string]tsMember{}
	for _, m := range splitTop(body, ';') {
		m = strings.TrimSpace(m)
		if m == "" || strings.HasPrefix(m, "[") {
			continue
		}
		m = strings.TrimPrefix(m, "readonly ")
		colon := strings.IndexByte(m, ':')
		paren := strings.IndexByte(m, '(')
		if paren >= 0 && (colon < 0 || paren < colon) {
			continue // a method
		}
		if colon < 0 {
			return nil, errors.New("typings: member without a type: " + m)
		}
		name, typ := strings.TrimSpace(m[:colon]), strings.TrimSpace(m[colon+1:])
		opt := strings.HasSuffix(name, "?")
		name = strings.Trim(strings.TrimSuffix(name, "?"), `"'`)
		if _, dup := members[name]; dup {
			return nil, errors.New("typings: member " + name + " declared twice")
		}
		members[name] = tsMember{optional: opt, typ: typ}
	}
	return members, nil
}

// objectType returns the members of the interface named by path in the typings src: "Name" or
// "Name.member" for an object type written inline as a member's type.
func objectType(src, path string) (map[string]tsMember, error) {
	src = stripComments(src)
	name, member, nested := strings.Cut(path, ".")
	start := -1
	for _, f := range []string{"export interface " + name + " ", "interface " + name + " "} {
		if i := strings.Index(src, f); i >= 0 {
			start = i + len(f)
			break
		}
	}
	if start < 0 {
		return nil, errors.New("typings: no interface " + name)
	}
	open := strings.IndexByte(src[start:], '{')
	if open < 0 {
		return nil, errors.New("typings: interface " + name + " has no body")
	}
	body, err := braced(src[start+open:])
	if err != nil {
		return nil, errors.New("typings: interface " + name + ": " + err.Error())
	}
	members, err := parseMembers(body)
	if err != nil || !nested {
		return members, err
	}
	m, ok := members[member]
	if !ok || !strings.HasPrefix(m.typ, "{") {
		return nil, errors.New("typings: " + path + " is not an inline object type")
	}
	body, err = braced(m.typ)
	if err != nil {
		return nil, errors.New("typings: " + path + ": " + err.Error())
	}
	return parseMembers(body)
}

// braced returns what is between the brace s starts with and the brace that closes it.
func braced(s string) (string, error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return s[1:i], nil
			}
		}
	}
	return "", errors.New("unclosed {")
}

// checkTypings lists how the typings' members differ from the JSON fields: a field missing, a
// field whose optionality or type differs, a member no field has. skip names members that are
// not the Go side's to check, with the reason.
func checkTypings(fields []jsonField, members map[string]tsMember, skip map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f.name] = true
		if _, ok := skip[f.name]; ok {
			continue
		}
		m, ok := members[f.name]
		switch {
		case !ok:
			out = append(out, "field "+f.name+" ("+f.ts+") is missing")
			continue
		case f.optional && !m.optional:
			out = append(out, "field "+f.name+" may be absent, the typings require it: write "+f.name+"?")
		case !f.optional && m.optional:
			out = append(out, "field "+f.name+" is always present, the typings make it optional: drop the ?")
		}
		alts := splitTop(m.typ, '|')
		for i := range alts {
			alts[i] = strings.TrimSpace(alts[i])
		}
		if !slices.Contains(alts, f.ts) {
			out = append(out, "field "+f.name+" is "+f.ts+", the typings say "+m.typ)
		}
	}
	for name := range members {
		if _, ok := skip[name]; !seen[name] && !ok {
			out = append(out, "the typings declare "+name+", which the Go side has no field for")
		}
	}
	slices.Sort(out)
	return out
}

// goFields returns the JSON fields of the struct type t as encoding/json (and the generated
// codec, wasm/internal/wire) names them. Every field of a request is optional: zero means the
// default. names are the TypeScript names of struct types.
func goFields(t reflect.Type, request bool, names map[reflect.Type]string) ([]jsonField, error) {
	var fields []jsonField
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if f.Anonymous {
			return nil, errors.New("typings: " + t.Name() + "." + f.Name + ": embedded fields are not supported here")
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		ts, err := tsOf(f.Type, names)
		if err != nil {
			return nil, errors.New("typings: " + t.Name() + "." + f.Name + ": " + err.Error())
		}
		optional := request || f.Type.Kind() == reflect.Pointer
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		fields = append(fields, jsonField{name: name, optional: optional, ts: ts})
	}
	return fields, nil
}

// tsOf is the TypeScript type of the JSON of values of the Go type t.
func tsOf(t reflect.Type, names map[reflect.Type]string) (string, error) {
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Slice, reflect.Array:
		elem, err := tsOf(t.Elem(), names)
		return elem + "[]", err
	case reflect.Pointer:
		return tsOf(t.Elem(), names)
	case reflect.Map:
		elem, err := tsOf(t.Elem(), names)
		return "Record<string, " + elem + ">", err
	case reflect.Interface:
		return "unknown", nil
	case reflect.Struct:
		if n, ok := names[t]; ok {
			return n, nil
		}
	}
	return "", errors.New("no TypeScript type for " + t.String())
}

// jsonFields returns the members of the JSON object b, each always present, with the
// TypeScript type of its value.
func jsonFields(b []byte) ([]jsonField, error) {
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, errors.New("typings: " + err.Error() + ": " + string(b))
	}
	var fields []jsonField
	for name, v := range obj {
		f := jsonField{name: name}
		switch v.(type) {
		case string:
			f.ts = "string"
		case float64:
			f.ts = "number"
		case bool:
			f.ts = "boolean"
		case nil:
			f.ts = "null"
		case []any:
			f.ts = "unknown[]"
		case map[string]any:
			f.ts = "Record<string, unknown>"
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func TestTypings(t *testing.T) {
	src, err := os.ReadFile(typingsPath)
	if err != nil {
		t.Fatal(err)
	}
	names := map[reflect.Type]string{
		reflect.TypeFor[engine.Result](): "Result",
		reflect.TypeFor[engine.Via]():    "Via",
		reflect.TypeFor[engine.Recall](): "Recall",
		reflect.TypeFor[engine.Filter](): "Filter",
	}
	goType := func(v any, request bool) func(t *testing.T) []jsonField {
		return func(t *testing.T) []jsonField {
			fields, err := goFields(reflect.TypeOf(v), request, names)
			if err != nil {
				t.Fatal(err)
			}
			return fields
		}
	}
	// The JSON of info and version is written by hand (reactor.go): take it from the module's
	// own answers on the sample artifact.
	answer := func(f func(r *reactor, h uint32) []byte) func(t *testing.T) []jsonField {
		return func(t *testing.T) []jsonField {
			r := newReactor()
			h, out := r.load(sampleArtifact(t))
			if out != nil {
				t.Fatalf("load: %s", out)
			}
			fields, err := jsonFields(f(r, h))
			if err != nil {
				t.Fatal(err)
			}
			return fields
		}
	}
	tests := []struct {
		name   string
		ts     string // the interface, or interface.member for an inline object type
		fields func(t *testing.T) []jsonField
		skip   map[string]string
	}{
		{"request", "QueryOptions", goType(engine.Request{}, true),
			map[string]string{"query": "Caskg.query's text argument"}},
		{"filter", "Filter", goType(engine.Filter{}, true), nil},
		{"response", "QueryResponse", goType(engine.Response{}, false), nil},
		{"result", "Result", goType(engine.Result{}, false), nil},
		{"via", "Via", goType(engine.Via{}, false), nil},
		{"recall", "Recall", goType(engine.Recall{}, false), nil},
		{"info", "Info", answer((*reactor).info), map[string]string{"module": "caskg.js adds version's answer",
			"learning": "checked as Info.learning"}},
		{"learning", "Info.learning", goType(engine.Learning{}, false), nil},
		{"version", "Info.module", answer(func(*reactor, uint32) []byte { return versionJSON() }), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			members, err := objectType(string(src), tc.ts)
			if err != nil {
				t.Fatal(err)
			}
			fields := tc.fields(t)
			if len(fields) == 0 {
				t.Fatalf("no JSON fields for %s", tc.ts)
			}
			if diff := checkTypings(fields, members, tc.skip); len(diff) > 0 {
				t.Errorf("%s: %s is out of date:\n%s", typingsPath, tc.ts, strings.Join(diff, "\n"))
			}
		})
	}
}

// TestCheckTypings holds the check to made-up typings, including the differences it must find.
func TestCheckTypings(t *testing.T) {
	const typings = `
/** not an interface: interface Fake { x: string } */
export interface Opts {
  /** skills to return; a comment's "k?: string;" is no member */
  k?: number; // trailing: z: string;
  vector?: Float32Array | number[];
  [option: string]: unknown;
}
interface Resp {
  results: Item[];
  "rendered"?: string;
  meta: { version: string; go?: string };
  params: Record<string, unknown> | null;
  query(text: string, options?: Opts): Resp;
}
`
	type item struct {
		Name string `json:"name"`
	}
	type opts struct {
		K      int       `json:"k,omitempty"`
		Vector []float32 `json:"vector,omitempty"`
		Seeds  int       `json:"seeds,omitempty"`
	}
	type resp struct {
		Results  []item `json:"results"`
		Rendered string `json:"rendered,omitempty"`
		Note     string `json:"-"`
	}
	type renamed struct {
		Results  []item `json:"items"`
		Rendered bool   `json:"rendered"`
	}
	names := map[reflect.Type]string{reflect.TypeFor[item](): "Item"}
	tests := []struct {
		name    string
		ts      string
		typ     any
		request bool
		skip    map[string]string
		want    []string
	}{
		{name: "a request field the typings lack", ts: "Opts", typ: opts{}, request: true,
			want: []string{"field seeds (number) is missing"}},
		{name: "the fields of a response", ts: "Resp", typ: resp{},
			skip: map[string]string{"meta": "", "params": ""}},
		{name: "a renamed field, a field now always present, another type", ts: "Resp", typ: renamed{},
			skip: map[string]string{"meta": "", "params": ""},
			want: []string{
				"field items (Item[]) is missing",
				"field rendered is always present, the typings make it optional: drop the ?",
				"field rendered is boolean, the typings say string",
				"the typings declare results, which the Go side has no field for",
			}},
		{name: "a response field made optional in Go", ts: "Resp", typ: struct {
			Results []item `json:"results,omitempty"`
		}{}, skip: map[string]string{"meta": "", "params": "", "rendered": ""},
			want: []string{"field results may be absent, the typings require it: write results?"}},
		{name: "an inline object type", ts: "Resp.meta", typ: struct {
			Version string `json:"version"`
			Go      string `json:"go,omitempty"`
			Format  string `json:"format"`
		}{}, want: []string{"field format (string) is missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			members, err := objectType(typings, tc.ts)
			if err != nil {
				t.Fatal(err)
			}
			fields, err := goFields(reflect.TypeOf(tc.typ), tc.request, names)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, checkTypings(fields, members, tc.skip)); diff != "" {
				t.Errorf("checkTypings (-want +got):\n%s", diff)
			}
		})
	}
	// Answers written by hand: every member present, typed by its value.
	fields, err := jsonFields([]byte(`{"params":{"a":1},"version":"0.1.0","n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	members, err := objectType(typings, "Resp")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"field n (number) is missing",
		"field version (string) is missing",
		"the typings declare meta, which the Go side has no field for",
		"the typings declare rendered, which the Go side has no field for",
		"the typings declare results, which the Go side has no field for",
	}
	if diff := cmp.Diff(want, checkTypings(fields, members, nil)); diff != "" {
		t.Errorf("checkTypings of an answer (-want +got):\n%s", diff)
	}
	for _, path := range []string{"Fake", "Missing", "Resp.results", "Resp.nothing"} {
		if _, err := objectType(typings, path); err == nil {
			t.Errorf("objectType(%q) = nil error", path)
		}
	}
}
