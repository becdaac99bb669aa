package mcpcore

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/service"
)

// Arguments are checked against the tool's input schema before a tool runs, by both servers
// (the Go SDK's own check would repeat whole values and name Go types). What a schema allows is
// read from the schema text itself, so the check and what clients see cannot drift apart; only
// the keywords Tools' schemas use are read. A message names the field and the rule it breaks
// and repeats at most a short prefix of a value.

// argSpec is what one input schema allows.
type argSpec struct {
	props    map[string]*prop
	names    []string // the properties, sorted
	required []string
}

// prop is one property; a bound of -1 is none.
type prop struct {
	typ                          string
	minLength, maxLength         int
	minItems, maxItems           int
	itemMinLength, itemMaxLength int // of an array of strings' elements
	minimum, maximum             *float64
	enum                         []string
}

// specs are the argSpecs of Tools, by name.
var specs = func() map[string]*argSpec {
	m := map[string]*argSpec{}
	for _, t := range Tools {
		s, err := parseSpec(t.InputSchema)
		if err != nil {
			panic("mcpcore: the input schema of " + t.Name + ": " + err.Error())
		}
		m[t.Name] = s
	}
	return m
}()

func parseSpec(schema string) (*argSpec, error) {
	s := &argSpec{props: map[string]*prop{}}
	d := jsontext.NewDecoder([]byte(schema))
	err := d.Object(func(key string) error {
		switch key {
		case "properties":
			return d.Object(func(name string) error {
				p := &prop{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, itemMinLength: -1, itemMaxLength: -1}
				s.props[name] = p
				s.names = append(s.names, name)
				return d.Object(func(k string) error { return p.read(d, k) })
			})
		case "required":
			var err error
			s.required, err = stringList(d)
			return err
		}
		return d.Skip()
	})
	if err == nil {
		err = d.End()
	}
	slices.Sort(s.names)
	return s, err
}

// read reads the keyword k of a property.
func (p *prop) read(d *jsontext.Decoder, k string) error {
	var err error
	switch k {
	case "type":
		p.typ, err = d.String()
	case "minLength":
		p.minLength, err = count(d)
	case "maxLength":
		p.maxLength, err = count(d)
	case "minItems":
		p.minItems, err = count(d)
	case "maxItems":
		p.maxItems, err = count(d)
	case "minimum", "maximum":
		var f float64
		if f, err = d.Float(64); k == "minimum" {
			p.minimum = &f
		} else {
			p.maximum = &f
		}
	case "enum":
		p.enum, err = stringList(d)
	case "items":
		err = d.Object(func(ik string) error {
			switch ik {
			case "minLength":
				p.itemMinLength, err = count(d)
				return err
			case "maxLength":
				p.itemMaxLength, err = count(d)
				return err
			}
			return d.Skip()
		})
	default:
		err = d.Skip()
	}
	return err
}

func count(d *jsontext.Decoder) (int, error) {
	n, err := d.Int(32)
	return int(n), err
}

// CheckArgs checks the arguments of a call of the tool name, JSON text (blank or null: none),
// against its input schema: nil, or the error a caller reads. A name that is not a tool's has
// no schema to break.
func CheckArgs(name string, args []byte) error {
	s := specs[name]
	if s == nil {
		return nil
	}
	d := jsontext.NewDecoder(args)
	if d.Peek() == 0 {
		d = jsontext.NewDecoder([]byte("{}"))
	}
	bad, err := s.check(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return &argsError{"arguments: must be an object"}
	}
	return bad
}

// checkArgsAt is CheckArgs for the arguments at d, which it consumes: bad is for the caller,
// err a syntax error of the message.
func checkArgsAt(name string, d *jsontext.Decoder) (bad, err error) {
	if s := specs[name]; s != nil {
		return s.check(d)
	}
	return nil, d.Skip()
}

type argsError struct{ msg string }

func (e *argsError) Error() string { return e.msg }

func (s *argSpec) check(d *jsontext.Decoder) (bad, err error) {
	if c := d.Peek(); c != '{' && c != 'n' {
		return &argsError{"arguments: must be an object, not " + kindOf(c)}, d.Skip()
	}
	fields := map[string]string{} // field → what is wrong with it, "" for nothing
	var unknown []string
	err = d.Object(func(key string) error {
		p := s.props[key]
		if p == nil {
			unknown = append(unknown, key)
			return d.Skip()
		}
		msg, err := p.check(d)
		fields[key] = msg
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case len(unknown) > 0:
		slices.Sort(unknown)
		if len(s.names) == 0 {
			return &argsError{"unknown argument " + strconv.Quote(service.Echo(unknown[0])) + "; the tool takes none"}, nil
		}
		return &argsError{"unknown argument " + strconv.Quote(service.Echo(unknown[0])) + "; the arguments are " + strings.Join(s.names, ", ")}, nil
	}
	for _, name := range s.required {
		if _, ok := fields[name]; !ok {
			return &argsError{"field " + strconv.Quote(name) + ": required"}, nil
		}
	}
	for _, name := range s.names {
		if msg := fields[name]; msg != "" {
			return &argsError{"field " + strconv.Quote(name) + ": " + msg}, nil
		}
	}
	return nil, nil
}

// check reads the value of p at d: what is wrong with it ("" nothing), or a syntax error.
func (p *prop) check(d *jsontext.Decoder) (string, error) {
	c := d.Peek()
	switch p.typ {
	case "string":
		if c != '"' {
			return "must be a string, not " + kindOf(c), d.Skip()
		}
		str, err := d.String()
		if err != nil {
			return "", err
		}
		if msg := length(utf8.RuneCountInString(str), p.minLength, p.maxLength, "characters"); msg != "" {
			return msg, nil
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, str) {
			quoted := make([]string, len(p.enum))
			for i, e := range p.enum {
				quoted[i] = strconv.Quote(e)
			}
			return strconv.Quote(service.Echo(str)) + " is not " + strings.Join(quoted, " or "), nil
		}
	case "array": // of strings, the only arrays Tools' schemas take
		if c != '[' {
			return "must be an array of strings, not " + kindOf(c), d.Skip()
		}
		n, first := 0, ""
		err := d.Array(func(i int) error {
			n++
			if c := d.Peek(); c != '"' {
				if first == "" {
					first = "element " + strconv.Itoa(i) + ": must be a string, not " + kindOf(c)
				}
				return d.Skip()
			}
			str, err := d.String()
			if msg := length(utf8.RuneCountInString(str), p.itemMinLength, p.itemMaxLength, "characters"); first == "" && msg != "" {
				if msg == "empty" {
					msg = "0 characters, at least " + strconv.Itoa(p.itemMinLength)
				}
				first = "element " + strconv.Itoa(i) + ": " + msg
			}
			return err
		})
		if err != nil {
			return "", err
		}
		if msg := length(n, p.minItems, p.maxItems, "elements"); msg != "" {
			return msg, nil
		}
		return first, nil
	case "integer", "number":
		what := "an integer"
		if p.typ == "number" {
			what = "a number"
		}
		if c != '-' && (c < '0' || c > '9') {
			return "must be " + what + ", not " + kindOf(c), d.Skip()
		}
		tok, err := d.Number()
		if err != nil {
			return "", err
		}
		f, perr := strconv.ParseFloat(tok, 64)
		switch {
		case perr != nil && !math.IsInf(f, 0):
			return "must be " + what, nil
		case p.typ == "integer" && f != math.Trunc(f):
			return "must be an integer, not " + service.Echo(tok), nil
		case p.minimum != nil && f < *p.minimum || p.maximum != nil && f > *p.maximum:
			return service.Echo(tok) + " is outside [" + bound(p.minimum) + ", " + bound(p.maximum) + "]", nil
		}
	case "boolean":
		if c != 't' && c != 'f' {
			return "must be true or false, not " + kindOf(c), d.Skip()
		}
		_, err := d.Bool()
		return "", err
	default:
		return "", d.Skip()
	}
	return "", nil
}

// length checks a count n against bounds min and max (-1: none); "empty" for 0 below a minimum.
func length(n, min, max int, unit string) string {
	switch {
	case min >= 0 && n < min && n == 0:
		return "empty"
	case min >= 0 && n < min:
		return strconv.Itoa(n) + " " + unit + ", at least " + strconv.Itoa(min)
	case max >= 0 && n > max:
		return strconv.Itoa(n) + " " + unit + ", at most " + strconv.Itoa(max)
	}
	return ""
}

func bound(b *float64) string {
	if b == nil {
		return "…"
	}
	return strconv.FormatFloat(*b, 'f', -1, 64)
}

// kindOf names the kind of the JSON value that starts with c.
func kindOf(c byte) string {
	if c == 0 {
		return "nothing"
	}
	return jsontext.Kind([]byte{c})
}
