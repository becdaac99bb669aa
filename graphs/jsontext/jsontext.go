// Package jsontext is caskg's small JSON codec, shared by the artifact format (graphs, for the
// build parameters) and every WebAssembly entry point (wasm/internal/wire and the hosts): string
// and number formatting byte-identical to encoding/json, a validity check that agrees with
// encoding/json.Valid, and a small pull decoder. encoding/json and fmt together cost the
// WebAssembly module about a quarter of its compressed size, and even a reflection-driven codec
// costs a fifth; these primitives, called from typed code generated for the request and response
// types, cost a few KB. Like graphs, it imports the standard library only.
//
// The decoder accepts what encoding/json.Unmarshal accepts for the same Go types, except that
// object keys must match a field's JSON name exactly (encoding/json also folds case), unknown
// keys are errors (as with DisallowUnknownFields), a key given twice in one object is an error
// (encoding/json keeps the last), and an integer may be written with a zero fraction or an
// exponent (3.0, 3e0), as JSON Schema's integer allows and Python's json.dumps writes a float.
//
// For a Go program: it is public because graphs, the engine's hosts and the native side all use
// it; outside a size-bound WebAssembly module, encoding/json serves as well.
package jsontext

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, so hostile input cannot exhaust the stack.
// It is encoding/json's limit, so that Valid agrees with encoding/json.Valid.
const MaxDepth = 10000

// AppendFloat appends f formatted as encoding/json formats a float of the given bit size:
// shortest representation, exponent form only outside [1e-6, 1e21), no leading zero in a
// negative exponent. NaN and infinities are errors, with encoding/json's text.
func AppendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json escapes it: quotes,
// backslashes and control characters, the HTML-sensitive <, > and &, U+2028 and U+2029, and
// invalid UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	// Every escape is written at one place, from e: an append per case cost the WebAssembly
	// module 2 KB.
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			i++
			continue
		}
		size := 1
		e, n := [6]byte{'\\', c}, 2 // the escape of s[i:i+size], its first n bytes
		if c < utf8.RuneSelf {
			switch c {
			case '\\', '"':
			case '\b':
				e[1] = 'b'
			case '\f':
				e[1] = 'f'
			case '\n':
				e[1] = 'n'
			case '\r':
				e[1] = 'r'
			case '\t':
				e[1] = 't'
			default:
				e, n = [6]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]}, 6
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				e, n = [6]byte{'\\', 'u', 'f', 'f', 'f', 'd'}, 6
			case r == '\u2028' || r == '\u2029':
				e, n = [6]byte{'\\', 'u', '2', '0', '2', hexDigits[r&0xF]}, 6
			default:
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		b = append(b, e[:n]...)
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendKey appends the key of an object member, given as its encoded form `"name":`, and the
// comma before it unless it is the object's first member.
//
// Not inlined, like Decoder.fail.
//
//go:noinline
func AppendKey(b []byte, key string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(b, key...)
}

// Valid reports whether data is one well-formed JSON value, surrounded by nothing but white
// space and nested at most MaxDepth deep: what encoding/json.Valid reports. Strings may hold any
// bytes but control characters, invalid UTF-8 included.
func Valid(data []byte) bool {
	d := NewDecoder(data)
	return d.Skip() == nil && d.End() == nil
}

// SyntaxError is a malformed or mistyped input: where, in which field, and what is wrong.
type SyntaxError struct {
	Offset int
	Field  string // dotted path of the member being decoded; empty at the top level
	Msg    string
	_      [0]func() // not comparable: no equality function for the type in the WebAssembly module
}

func (e *SyntaxError) Error() string {
	s := "json at offset " + strconv.Itoa(e.Offset) + ": "
	if e.Field != "" {
		s += "field " + strconv.Quote(e.Field) + ": "
	}
	return s + e.Msg
}

// Decoder reads one JSON value from a byte slice, a token at a time, driven by typed code
// that knows the shape it expects.
type Decoder struct {
	data  []byte
	i     int
	depth int
	path  []string
}

// NewDecoder returns a decoder at the start of data.
func NewDecoder(data []byte) *Decoder { return &Decoder{data: data} }

// End checks that nothing but white space follows the value.
func (d *Decoder) End() error {
	if d.Peek() != 0 || d.i < len(d.data) {
		return d.fail("data after the JSON value")
	}
	return nil
}

// fail is not inlined, nor are literal and Null: each is called from many places of the
// generated decoders, and inlined they would grow the WebAssembly module.
//
//go:noinline
func (d *Decoder) fail(msg string) error {
	// The path joined by hand: strings.Join would cost the WebAssembly module 2.7 KB.
	field := ""
	for i, p := range d.path {
		if i > 0 {
			field += "."
		}
		field += p
	}
	return &SyntaxError{Offset: d.i, Field: field, Msg: msg}
}

// Peek skips white space and returns the next byte, which tells the kind of the next value, or 0
// at the end of the input. Not inlined, like fail.
//
//go:noinline
func (d *Decoder) Peek() byte {
	for d.i < len(d.data) {
		switch c := d.data[d.i]; c {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return c
		}
	}
	return 0
}

//go:noinline
func (d *Decoder) literal(lit string) bool {
	if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// unescape is the byte that the escape \e of a JSON string stands for, e one of "\\/bfnrt.
func unescape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e
}

// describe names the kind of value starting with c, for error messages.
func (d *Decoder) describe(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 0 && d.i >= len(d.data):
		return "the end of the input"
	}
	return strconv.QuoteRune(rune(c))
}

func (d *Decoder) mismatch(want string, c byte) error {
	return d.fail("want " + want + ", got " + d.describe(c))
}

// Null consumes a null and reports whether there was one.
//
//go:noinline
func (d *Decoder) Null() bool {
	return d.Peek() == 'n' && d.literal("null")
}

// UnknownField is the error for an object key the caller has no field for.
func (d *Decoder) UnknownField() error { return d.fail("unknown field") }

func (d *Decoder) enter() error {
	if d.depth++; d.depth > MaxDepth {
		return d.fail("nested too deeply")
	}
	return nil
}

// Object reads an object, calling member for each key with the decoder at the member's value;
// member must consume the value. null is an empty object. A key given twice is an error naming
// it, as a repeated query parameter is: which of the two a caller meant is a guess.
func (d *Decoder) Object(member func(key string) error) error {
	return d.object(member, true)
}

// object is Object; unique asks for the check of repeated keys, which Skip (and so Valid,
// which agrees with encoding/json.Valid) leaves out.
func (d *Decoder) object(member func(key string) error, unique bool) error {
	if d.Null() {
		return nil
	}
	if c := d.Peek(); c != '{' {
		return d.mismatch("an object", c)
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.i++
	if d.Peek() == '}' {
		d.i++
		d.depth--
		return nil
	}
	// The keys so far. A map: a slice of them cost the WebAssembly module 1.8 KB (growslice for
	// strings), a map 0.2 KB, its code being linked already.
	var seen map[string]bool
	for {
		if c := d.Peek(); c != '"' {
			return d.mismatch("a string key", c)
		}
		keyAt := d.i
		key, err := d.str()
		if err != nil {
			return err
		}
		if c := d.Peek(); c != ':' {
			return d.mismatch("':'", c)
		}
		d.i++
		d.path = append(d.path, key)
		if unique {
			if seen[key] {
				d.i = keyAt
				return d.fail("key given twice")
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[key] = true
		}
		valueAt := d.i
		if err := member(key); err != nil {
			if se, ok := err.(*SyntaxError); ok && se.Msg == "unknown field" && d.i == valueAt {
				se.Offset = keyAt
			}
			return err
		}
		d.path = d.path[:len(d.path)-1]
		switch c := d.Peek(); c {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return nil
		default:
			return d.mismatch("',' or '}'", c)
		}
	}
}

// Array reads an array, calling elem for each element with the decoder at it; elem must consume
// the element. null is an empty array.
func (d *Decoder) Array(elem func(i int) error) error {
	if d.Null() {
		return nil
	}
	if c := d.Peek(); c != '[' {
		return d.mismatch("an array", c)
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.i++
	if d.Peek() == ']' {
		d.i++
		d.depth--
		return nil
	}
	for n := 0; ; n++ {
		d.path = append(d.path, strconv.Itoa(n))
		if err := elem(n); err != nil {
			return err
		}
		d.path = d.path[:len(d.path)-1]
		switch c := d.Peek(); c {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return nil
		default:
			return d.mismatch("',' or ']'", c)
		}
	}
}

// Bool reads true or false.
func (d *Decoder) Bool() (bool, error) {
	c := d.Peek()
	switch {
	case c == 't' && d.literal("true"):
		return true, nil
	case c == 'f' && d.literal("false"):
		return false, nil
	}
	return false, d.mismatch("a boolean", c)
}

// String reads a string. Invalid UTF-8 and unpaired surrogates become U+FFFD, as in
// encoding/json.
func (d *Decoder) String() (string, error) {
	if c := d.Peek(); c != '"' {
		return "", d.mismatch("a string", c)
	}
	return d.str()
}

// Int reads an integer that fits in bits bits; 3.0 and 3e0 are 3, 3.5 is an error.
func (d *Decoder) Int(bits int) (int64, error) {
	tok, err := d.Number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(tok, 10, bits)
	if err != nil {
		f, ok := whole(tok)
		if !ok {
			return 0, d.fail("number " + tok + " is not a whole number")
		}
		if lim := float64(uint64(1) << (bits - 1)); f < -lim || f >= lim {
			return 0, d.fail("number " + tok + " is not a " + strconv.Itoa(bits) + "-bit integer")
		}
		n = int64(f)
	}
	return n, nil
}

// Uint reads an unsigned integer that fits in bits bits; 3.0 and 3e0 are 3.
func (d *Decoder) Uint(bits int) (uint64, error) {
	tok, err := d.Number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(tok, 10, bits)
	if err != nil {
		f, ok := whole(tok)
		if !ok {
			return 0, d.fail("number " + tok + " is not a whole number")
		}
		if f < 0 || f >= 2*float64(uint64(1)<<(bits-1)) {
			return 0, d.fail("number " + tok + " is not a " + strconv.Itoa(bits) + "-bit unsigned integer")
		}
		n = uint64(f)
	}
	return n, nil
}

// whole reads tok, a number strconv's integer parsers refused, as a float with no fraction;
// false for a fraction. An integer too large for its type reads as whole, for the range error.
func whole(tok string) (float64, bool) {
	f, err := strconv.ParseFloat(tok, 64)
	return f, err == nil && f == math.Trunc(f)
}

// Float reads a number as a float of bits bits; out of range is an error, as in encoding/json.
func (d *Decoder) Float(bits int) (float64, error) {
	tok, err := d.Number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(tok, bits)
	if err != nil {
		return 0, d.fail("number " + tok + " is out of range for a " + strconv.Itoa(bits) + "-bit float")
	}
	return f, nil
}

// Number reads a number and returns its text, for callers that convert it themselves.
func (d *Decoder) Number() (string, error) {
	if c := d.Peek(); c != '-' && (c < '0' || c > '9') {
		return "", d.mismatch("a number", c)
	}
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case digits() == 0:
		return "", d.fail("invalid number")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return "", d.fail("invalid number")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return "", d.fail("invalid number")
		}
	}
	return string(d.data[start:d.i]), nil
}

// str decodes the string whose opening quote is at the cursor.
func (d *Decoder) str() (string, error) {
	d.i++
	start := d.i
	// Fast path: printable ASCII without escapes.
	for d.i < len(d.data) {
		c := d.data[d.i]
		if c == '"' {
			d.i++
			return string(d.data[start : d.i-1]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		d.i++
	}
	b := append([]byte(nil), d.data[start:d.i]...)
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), nil
		case c < 0x20:
			return "", d.fail("control character in string")
		case c == '\\':
			if d.i+1 >= len(d.data) {
				return "", d.fail("unterminated string")
			}
			d.i++
			switch e := d.data[d.i]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b = append(b, unescape(e)) // one append: one per escape cost the module 1 KB
			case 'u':
				r, ok := d.hex4(d.i + 1)
				if !ok {
					return "", d.fail(`invalid \u escape`)
				}
				d.i += 4
				if hi := r; utf16.IsSurrogate(hi) {
					// A pair is consumed whole; anything else leaves U+FFFD for the first half.
					r = utf8.RuneError
					if d.i+2 < len(d.data) && d.data[d.i+1] == '\\' && d.data[d.i+2] == 'u' {
						if lo, ok := d.hex4(d.i + 3); ok {
							if dec := utf16.DecodeRune(hi, lo); dec != utf8.RuneError {
								r = dec
								d.i += 6
							}
						}
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", d.fail("invalid escape")
			}
			d.i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.data[d.i:])
			d.i += size
			b = utf8.AppendRune(b, r) // U+FFFD for each invalid byte
		}
	}
	return "", d.fail("unterminated string")
}

func (d *Decoder) hex4(at int) (rune, bool) {
	if at+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Skip checks and steps over one value of any kind.
func (d *Decoder) Skip() error {
	switch c := d.Peek(); c {
	case '{':
		return d.object(func(string) error { return d.Skip() }, false)
	case '[':
		return d.Array(func(int) error { return d.Skip() })
	case '"':
		_, err := d.str()
		return err
	case 't', 'f':
		_, err := d.Bool()
		return err
	case 'n':
		if d.Null() {
			return nil
		}
		return d.fail("invalid literal")
	default:
		_, err := d.Number()
		return err
	}
}

// InvalidUTF8 is the offset of the first byte of b that is not valid UTF-8, or -1. The decoder
// reads such a byte as U+FFFD, as encoding/json does; a reader that must refuse it instead (a
// request, a catalog, a task file) asks here first.
func InvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
