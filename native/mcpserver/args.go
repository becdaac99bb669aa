package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/mcpcore"
)

// argSpec is what a tool's input schema allows, read from the schema itself so that the
// check and what clients see cannot drift apart. Only the keywords our schemas use are read.
type argSpec struct {
	Properties map[string]struct {
		Type                 string
		MinLength, MaxLength *int
		MinItems, MaxItems   *int
		Minimum, Maximum     *float64
		Enum                 []string
		Items                struct{ MinLength, MaxLength *int } // of an array of strings
	}
	Required []string
}

func parseSpec(schema string) *argSpec {
	var s argSpec
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		panic("mcpserver: bad input schema: " + err.Error())
	}
	return &s
}

// check validates a tool's arguments. The message names the field and the rule it breaks and
// repeats at most a short prefix of a value; the SDK's own schema check, which runs after
// this one, would repeat whole values and name Go types.
func (s *argSpec) check(args json.RawMessage) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if k := jsontext.Kind(args); k != "an object" {
		return fmt.Errorf("arguments: must be an object, not %s", k)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return fmt.Errorf("arguments: must be an object")
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	var unknown []string
	for name := range fields {
		if _, ok := s.Properties[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if len(names) == 0 {
			return fmt.Errorf("unknown argument %q; the tool takes none", mcpcore.Short(unknown[0]))
		}
		return fmt.Errorf("unknown argument %q; the arguments are %s", mcpcore.Short(unknown[0]), strings.Join(names, ", "))
	}
	for _, name := range s.Required {
		if _, ok := fields[name]; !ok {
			return fmt.Errorf("field %q: required", name)
		}
	}
	for _, name := range names {
		v, ok := fields[name]
		if !ok {
			continue
		}
		if err := s.checkField(name, v); err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
	}
	return nil
}

func (s *argSpec) checkField(name string, v json.RawMessage) error {
	p := s.Properties[name]
	k := jsontext.Kind(v)
	switch p.Type {
	case "string":
		var str string
		if k != "a string" || json.Unmarshal(v, &str) != nil {
			return fmt.Errorf("must be a string, not %s", k)
		}
		n := utf8.RuneCountInString(str)
		if p.MinLength != nil && n < *p.MinLength {
			if n == 0 {
				return fmt.Errorf("empty")
			}
			return fmt.Errorf("%d characters, at least %d", n, *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("%d characters, at most %d", n, *p.MaxLength)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, str) {
			return fmt.Errorf("%q is not %s", mcpcore.Short(str), strings.Join(quoteAll(p.Enum), " or "))
		}
	case "array": // of strings, the only arrays our schemas take
		var elems []json.RawMessage
		if k != "an array" || json.Unmarshal(v, &elems) != nil {
			return fmt.Errorf("must be an array of strings, not %s", k)
		}
		if p.MinItems != nil && len(elems) < *p.MinItems {
			if len(elems) == 0 {
				return fmt.Errorf("empty")
			}
			return fmt.Errorf("%d elements, at least %d", len(elems), *p.MinItems)
		}
		if p.MaxItems != nil && len(elems) > *p.MaxItems {
			return fmt.Errorf("%d elements, at most %d", len(elems), *p.MaxItems)
		}
		for i, e := range elems {
			var str string
			if ek := jsontext.Kind(e); ek != "a string" || json.Unmarshal(e, &str) != nil {
				return fmt.Errorf("element %d: must be a string, not %s", i, ek)
			}
			n := utf8.RuneCountInString(str)
			if p.Items.MinLength != nil && n < *p.Items.MinLength {
				return fmt.Errorf("element %d: %d characters, at least %d", i, n, *p.Items.MinLength)
			}
			if p.Items.MaxLength != nil && n > *p.Items.MaxLength {
				return fmt.Errorf("element %d: %d characters, at most %d", i, n, *p.Items.MaxLength)
			}
		}
	case "integer":
		if k != "a number" {
			return fmt.Errorf("must be an integer, not %s", k)
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !math.IsInf(f, 0) {
			return fmt.Errorf("must be an integer")
		}
		if f != math.Trunc(f) {
			return fmt.Errorf("must be an integer, not %s", mcpcore.Short(string(v)))
		}
		if p.Minimum != nil && f < *p.Minimum || p.Maximum != nil && f > *p.Maximum {
			return fmt.Errorf("%s is outside [%s, %s]", mcpcore.Short(string(v)), bound(p.Minimum), bound(p.Maximum))
		}
	case "boolean":
		if k != "a boolean" {
			return fmt.Errorf("must be true or false, not %s", k)
		}
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func bound(b *float64) string {
	if b == nil {
		return "…"
	}
	return strconv.FormatFloat(*b, 'f', -1, 64)
}

// checkArgs is receiving middleware that checks a tools/call's arguments against the tool's
// spec before the SDK decodes them, and answers bad ones with a tool error.
func checkArgs(specs map[string]*argSpec) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if spec := specs[r.Params.Name]; spec != nil {
					if err := spec.check(r.Params.Arguments); err != nil {
						res := &mcp.CallToolResult{}
						res.SetError(err)
						return res, nil
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}
