package graphs

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The build parameters are coded here rather than with encoding/json, which (with fmt, which it
// imports) would add over 100 KB to the compressed WebAssembly module that links this package.
// The bytes are those encoding/json.Marshal writes, and decoding gives what
// encoding/json.Unmarshal gives, for the values build parameters hold: booleans, numbers,
// strings, nil, and maps (with string or integer keys), slices, arrays and pointers of them.
// Other values (structs, marshalers) are errors.

// marshalParams encodes p as encoding/json.Marshal does, with sorted map keys.
func marshalParams(p map[string]any) ([]byte, error) {
	return appendJSON(nil, reflect.ValueOf(p))
}

func appendJSON(b []byte, v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32:
		return appendJSONFloat(b, v.Float(), 32)
	case reflect.Float64:
		return appendJSONFloat(b, v.Float(), 64)
	case reflect.String:
		return appendJSONString(b, v.String()), nil
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendJSON(b, v.Elem())
	case reflect.Map:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		type member struct {
			key string
			val reflect.Value
		}
		var ms []member
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			var key string
			switch k.Kind() {
			case reflect.String:
				key = k.String()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				key = strconv.FormatInt(k.Int(), 10)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				key = strconv.FormatUint(k.Uint(), 10)
			default:
				return b, unsupportedType(v.Type())
			}
			ms = append(ms, member{key, it.Value()})
		}
		slices.SortFunc(ms, func(x, y member) int {
			switch {
			case x.key < y.key:
				return -1
			case x.key > y.key:
				return 1
			}
			return 0
		})
		b = append(b, '{')
		for i, m := range ms {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendJSONString(b, m.key), ':')
			var err error
			if b, err = appendJSON(b, m.val); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case reflect.Slice:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(appendBase64(append(b, '"'), v.Bytes()), '"'), nil
		}
		fallthrough
	case reflect.Array:
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, v.Index(i)); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	return b, unsupportedType(v.Type())
}

// appendBase64 appends src in standard, padded base64, as encoding/json writes a []byte (without
// importing encoding/base64, whose tables the WebAssembly module would otherwise link).
func appendBase64(b, src []byte) []byte {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for len(src) >= 3 {
		v := uint(src[0])<<16 | uint(src[1])<<8 | uint(src[2])
		b = append(b, enc[v>>18&0x3F], enc[v>>12&0x3F], enc[v>>6&0x3F], enc[v&0x3F])
		src = src[3:]
	}
	switch len(src) {
	case 2:
		v := uint(src[0])<<16 | uint(src[1])<<8
		b = append(b, enc[v>>18&0x3F], enc[v>>12&0x3F], enc[v>>6&0x3F], '=')
	case 1:
		v := uint(src[0]) << 16
		b = append(b, enc[v>>18&0x3F], enc[v>>12&0x3F], '=', '=')
	}
	return b
}

func unsupportedType(t reflect.Type) error {
	return errors.New("json: unsupported type: " + t.String())
}

// appendJSONFloat appends f as encoding/json writes a float of the given bit size: the shortest
// representation, in exponent form only outside [1e-6, 1e21) and without a leading zero in a
// negative exponent. NaN and infinities are errors.
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, error) {
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

// appendJSONString appends s quoted as encoding/json quotes it: quotes, backslashes and control
// characters escaped, and the HTML-sensitive <, > and &, U+2028 and U+2029; invalid UTF-8 as
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// unmarshalParams decodes data, which validJSON accepts, as encoding/json.Unmarshal decodes it
// into a map[string]any, errors included: null gives a nil map, numbers become float64.
func unmarshalParams(data []byte) (map[string]any, error) {
	p := jsonScanner{data: data}
	p.space()
	if p.i < len(data) && p.data[p.i] != '{' && p.data[p.i] != 'n' {
		kind := "number"
		switch p.data[p.i] {
		case '[':
			kind = "array"
		case '"':
			kind = "string"
		case 't', 'f':
			kind = "bool"
		}
		return nil, errors.New("json: cannot unmarshal " + kind + " into Go value of type map[string]interface {}")
	}
	v, err := p.decode()
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// decode decodes the value at p.i; the input is known to be valid JSON.
func (p *jsonScanner) decode() (any, error) {
	p.space()
	switch p.data[p.i] {
	case '{':
		m := map[string]any{}
		p.i++
		for {
			p.space()
			if p.data[p.i] == '}' {
				p.i++
				return m, nil
			}
			if p.data[p.i] == ',' {
				p.i++
				p.space()
			}
			k := p.unquote()
			p.space()
			p.i++ // ':'
			v, err := p.decode()
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
	case '[':
		a := []any{}
		p.i++
		for {
			p.space()
			if p.data[p.i] == ']' {
				p.i++
				return a, nil
			}
			if p.data[p.i] == ',' {
				p.i++
			}
			v, err := p.decode()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case '"':
		return p.unquote(), nil
	case 't':
		p.i += 4
		return true, nil
	case 'f':
		p.i += 5
		return false, nil
	case 'n':
		p.i += 4
		return nil, nil
	}
	start := p.i
	p.number()
	s := string(p.data[start:p.i])
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errors.New("json: cannot unmarshal number " + s + " into Go value of type float64")
	}
	return f, nil
}

// unquote decodes the string at p.i as encoding/json does: a lone or broken surrogate and each
// byte of invalid UTF-8 become U+FFFD.
func (p *jsonScanner) unquote() string {
	p.i++
	var b []byte
	for {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b)
		case c == '\\':
			p.i++
			switch e := p.data[p.i]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := p.hex4(p.i + 1)
				p.i += 4
				if utf16.IsSurrogate(r) {
					dec := utf8.RuneError
					if p.i+6 < len(p.data) && p.data[p.i+1] == '\\' && p.data[p.i+2] == 'u' {
						if lo := p.hex4(p.i + 3); lo >= 0 {
							dec = utf16.DecodeRune(r, lo)
						}
					}
					if r = dec; r != utf8.RuneError {
						p.i += 6
					}
				}
				b = utf8.AppendRune(b, r)
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			p.i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			p.i += size
			b = utf8.AppendRune(b, r)
		}
	}
}

// hex4 decodes the four hex digits at i, or gives -1.
func (p *jsonScanner) hex4(i int) rune {
	if i+4 > len(p.data) {
		return -1
	}
	var r rune
	for _, c := range p.data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
