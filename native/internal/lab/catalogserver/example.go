package catalogserver

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of generated values: however a schema nests or refers to itself, a generated value
// has at most maxNodes values in it, is at most maxDepth deep, and no string or array is longer
// than maxLen, so a schema cannot make the generator slow or its answer large.
const (
	maxNodes = 2000
	maxDepth = 10
	maxLen   = 64
)

// ExampleArgs returns arguments that satisfy a tool's input schema as the server checks it:
// every property the schema lists (nested ones too) gets a value of its type, from its const,
// first enum value or valid default when it has one, else a plain value made from the
// property's name ("city" gets "city-example", numbers 1 or 1.5 within their bounds, dates and
// e-mail addresses for string formats). The same schema always gives the same arguments.
//
// schema is the tool's inputSchema: a decoded JSON value (as a client's mcp.Tool holds it), a
// json.RawMessage or []byte, or anything encoding/json marshals. It is read as the server
// serves it (see Catalog), so a schema the server wraps gets wrapped arguments. Any input is
// accepted; a schema that is not one gives empty arguments.
func ExampleArgs(schema any) map[string]any {
	s, _ := normalizeInput(decodeSchema(schema))
	g := &generator{root: s, example: true}
	if m, ok := g.value(s, "", 0, 0).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// result is the structured content of a call: a value of the output schema (always an object),
// drawn from seed so that different arguments give different values.
func result(outputSchema map[string]any, seed uint64) map[string]any {
	g := &generator{root: outputSchema}
	if m, ok := g.value(outputSchema, "", seed, 0).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// decodeSchema turns a schema given in any form into decoded JSON (nil if it is not JSON).
func decodeSchema(schema any) any {
	var data []byte
	switch s := schema.(type) {
	case map[string]any, bool, nil:
		return s
	case json.RawMessage:
		data = s
	case []byte:
		data = s
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil
		}
		data = b
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	return v
}

// A generator makes values of schemas: example arguments (example set, seed unused beyond
// picking nothing) or call results (values drawn from the seed).
type generator struct {
	root    any // for "#/..." references
	example bool
	nodes   int
}

func (g *generator) value(schema any, key string, seed uint64, depth int) any {
	g.nodes++
	s, _ := schema.(map[string]any)
	if s == nil {
		return g.scalar("string", nil, key, seed)
	}
	if ref, ok := s["$ref"].(string); ok && depth < maxDepth && g.nodes < maxNodes {
		if r, ok := resolve(g.root, ref); ok {
			return g.value(r, key, seed, depth+1)
		}
	}
	if c, ok := s["const"]; ok {
		return clone(c)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		if g.example {
			return clone(e[0])
		}
		return clone(e[seed%uint64(len(e))])
	}
	if d, ok := s["default"]; ok && g.example && validate(s, d, "") == nil {
		return clone(d)
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 && depth < maxDepth {
		return g.value(mergeAll(s, all), key, seed, depth+1)
	}
	ts := types(s)
	if ts == nil {
		for _, k := range []string{"anyOf", "oneOf"} {
			if alts, ok := s[k].([]any); ok && depth < maxDepth {
				for _, a := range alts {
					if am, ok := a.(map[string]any); ok {
						return g.value(am, key, seed, depth+1)
					}
				}
			}
		}
	}
	t := ""
	for _, x := range ts {
		if x != "null" {
			t = x
			break
		}
	}
	if t == "" {
		switch {
		case len(ts) > 0:
			return nil // only "null" allowed
		case s["properties"] != nil || s["required"] != nil:
			t = "object"
		case s["items"] != nil:
			t = "array"
		default:
			t = "string"
		}
	}
	deep := depth >= maxDepth || g.nodes >= maxNodes
	switch t {
	case "object":
		m := map[string]any{}
		if deep {
			return m
		}
		props, _ := s["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			m[k] = g.value(props[k], k, mix(seed, k), depth+1)
		}
		// A required name without a property schema still needs a value; additionalProperties
		// says what it may be.
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if k, ok := r.(string); ok {
					if _, ok := m[k]; !ok {
						m[k] = g.value(s["additionalProperties"], k, mix(seed, k), depth+1)
					}
				}
			}
		}
		return m
	case "array":
		n := 1
		if !g.example {
			n = 2
		}
		if lo, ok := intKeyword(s, "minItems"); ok && lo > n {
			n = lo
		}
		if hi, ok := intKeyword(s, "maxItems"); ok && hi < n {
			n = max(hi, 0)
		}
		n = min(n, maxLen)
		if deep {
			n = 0
		}
		a := make([]any, 0, n)
		for i := range n {
			item := s["items"]
			if tuple, ok := s["prefixItems"].([]any); ok && i < len(tuple) {
				item = tuple[i]
			} else if tuple, ok := item.([]any); ok { // draft-04 tuple form
				item = nil
				if i < len(tuple) {
					item = tuple[i]
				}
			}
			a = append(a, g.value(item, key, mix(seed, fmt.Sprint(i)), depth+1))
		}
		return a
	}
	return g.scalar(t, s, key, seed)
}

// scalar is a value of type t ("string", "integer", "number", "boolean" or "null").
func (g *generator) scalar(t string, s map[string]any, key string, seed uint64) any {
	switch t {
	case "boolean":
		return g.example || seed&1 == 1
	case "null":
		return nil
	case "integer":
		v := 1.0
		if !g.example {
			v = float64(seed % 1000)
		}
		return bound(s, v, true)
	case "number":
		v := 1.5
		if !g.example {
			v = float64(seed%100000) / 100
		}
		return bound(s, v, false)
	}
	format, _ := s["format"].(string)
	str := formatted(format, key, seed, g.example)
	if lo, ok := intKeyword(s, "minLength"); ok {
		if n := min(lo, maxLen) - utf8.RuneCountInString(str); n > 0 {
			str += strings.Repeat("x", n)
		}
	}
	if hi, ok := intKeyword(s, "maxLength"); ok && utf8.RuneCountInString(str) > max(hi, 0) {
		str = string([]rune(str)[:max(hi, 0)])
	}
	return str
}

// formatted is a string for a format (or for none), named after the property key.
func formatted(format, key string, seed uint64, example bool) string {
	day := 0
	if !example {
		day = int(seed % 3650)
	}
	date := func() string { return dateOf(day) }
	switch format {
	case "date":
		return date()
	case "date-time":
		return fmt.Sprintf("%sT%02d:%02d:00Z", date(), day%24, day%60)
	case "time":
		return fmt.Sprintf("%02d:%02d:00", day%24, day%60)
	case "email":
		return fmt.Sprintf("user%d@example.com", day)
	case "uri", "url", "uri-reference", "iri":
		return fmt.Sprintf("https://example.com/%d", day)
	case "uuid":
		return fmt.Sprintf("00000000-0000-4000-8000-%012x", seed&0xffffffffffff)
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", day%256)
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", day)
	case "hostname":
		return fmt.Sprintf("host%d.example.com", day)
	}
	name := strings.Join(strings.Fields(key), "_")
	if name == "" {
		name = "value"
	}
	if utf8.RuneCountInString(name) > maxLen/2 {
		name = string([]rune(name)[:maxLen/2])
	}
	if example {
		return name + "-example"
	}
	return fmt.Sprintf("%s-%08x", name, uint32(seed))
}

// dateOf is the date day days after 2020-01-01, without time zones involved.
func dateOf(day int) string {
	y, d := 2020, day
	for {
		n := 365
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			n = 366
		}
		if d < n {
			break
		}
		d -= n
		y++
	}
	lengths := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		lengths[1] = 29
	}
	m := 0
	for d >= lengths[m] {
		d -= lengths[m]
		m++
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m+1, d+1)
}

// bound moves v inside the schema's minimum and maximum (exclusive ones too, in both the
// draft-04 boolean and the numeric form), whole when integer is set.
func bound(s map[string]any, v float64, integer bool) float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	loEx, hiEx := false, false
	if x, ok := num(s, "minimum"); ok {
		lo = x
		loEx, _ = s["exclusiveMinimum"].(bool)
	}
	if x, ok := num(s, "maximum"); ok {
		hi = x
		hiEx, _ = s["exclusiveMaximum"].(bool)
	}
	if x, ok := num(s, "exclusiveMinimum"); ok && x >= lo {
		lo, loEx = x, true
	}
	if x, ok := num(s, "exclusiveMaximum"); ok && x <= hi {
		hi, hiEx = x, true
	}
	step := 0.5
	if integer {
		step = 1
		if !math.IsInf(lo, 0) {
			if loEx && lo == math.Floor(lo) {
				lo++
			}
			lo = math.Ceil(lo)
		}
		if !math.IsInf(hi, 0) {
			if hiEx && hi == math.Floor(hi) {
				hi--
			}
			hi = math.Floor(hi)
		}
		loEx, hiEx = false, false
	}
	if v < lo || v == lo && loEx {
		v = lo
		if loEx {
			v = lo + step
			if v >= hi {
				v = lo + (hi-lo)/2
			}
		}
	}
	if v > hi || v == hi && hiEx {
		v = hi
		if hiEx {
			v = hi - step
			if v <= lo {
				v = lo + (hi-lo)/2
			}
		}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func num(s map[string]any, key string) (float64, bool) {
	x, ok := s[key].(float64)
	return x, ok && !math.IsNaN(x) && !math.IsInf(x, 0)
}

// intKeyword reads a count keyword (minItems, maxLength...), saturated to the int range.
func intKeyword(s map[string]any, key string) (int, bool) {
	x, ok := num(s, key)
	if !ok {
		return 0, false
	}
	return int(math.Max(math.Min(x, 1<<30), -1)), true
}

// resolve follows a local reference "#/a/b" (JSON pointer syntax) from the root schema.
func resolve(root any, ref string) (any, bool) {
	if ref == "#" {
		return root, true
	}
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(p, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// mergeAll folds allOf's object schemas into s: properties and required lists are united,
// other keywords keep their first value. Enough for the "base plus extension" use of allOf.
func mergeAll(s map[string]any, all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var req []any
	for _, part := range append([]any{s}, all...) {
		m, ok := part.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch k {
			case "allOf":
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					for pk, pv := range pm {
						if _, ok := props[pk]; !ok {
							props[pk] = pv
						}
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					req = append(req, r...)
				}
			default:
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

// clone deep-copies a decoded JSON value, so that callers may change what they are given.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = clone(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = clone(e)
		}
		return a
	}
	return v
}

// mix derives a sub-seed for key from seed.
func mix(seed uint64, key string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(key))
	return h.Sum64()
}
