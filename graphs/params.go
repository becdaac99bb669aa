package graphs

import (
	"errors"
	"reflect"
	"slices"
	"strconv"

	"github.com/caskg/caskg/graphs/jsontext"
)

// The build parameters are coded here, over the primitives of jsontext, rather than with
// encoding/json, which (with fmt, which it imports) would add over 100 KB to the compressed
// WebAssembly module that links this package. The bytes are those encoding/json.Marshal writes,
// and decoding gives what encoding/json.Unmarshal gives, for the values build parameters hold:
// booleans, numbers, strings, nil, and maps (with string or integer keys), slices, arrays and
// pointers of them. Other values (structs, marshalers) are errors.

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
		return jsontext.AppendFloat(b, v.Float(), 32)
	case reflect.Float64:
		return jsontext.AppendFloat(b, v.Float(), 64)
	case reflect.String:
		return jsontext.AppendString(b, v.String()), nil
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
			b = append(jsontext.AppendString(b, m.key), ':')
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

// unmarshalParams decodes data, which jsontext.Valid accepts, as encoding/json.Unmarshal decodes
// it into a map[string]any, errors included: null gives a nil map, numbers become float64. An
// object that repeats a key, which marshalParams never writes, is an error (jsontext's).
func unmarshalParams(data []byte) (map[string]any, error) {
	d := jsontext.NewDecoder(data)
	if c := d.Peek(); c != '{' && c != 'n' {
		kind := "number"
		switch c {
		case '[':
			kind = "array"
		case '"':
			kind = "string"
		case 't', 'f':
			kind = "bool"
		}
		return nil, errors.New("json: cannot unmarshal " + kind + " into Go value of type map[string]interface {}")
	}
	v, err := decodeAny(d)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// decodeAny decodes the next value as encoding/json decodes it into an interface value.
func decodeAny(d *jsontext.Decoder) (any, error) {
	switch d.Peek() {
	case 'n':
		d.Null()
		return nil, nil
	case '{':
		m := map[string]any{}
		err := d.Object(func(key string) error {
			v, err := decodeAny(d)
			m[key] = v
			return err
		})
		return m, err
	case '[':
		a := []any{}
		err := d.Array(func(int) error {
			v, err := decodeAny(d)
			a = append(a, v)
			return err
		})
		return a, err
	case '"':
		return d.String()
	case 't', 'f':
		return d.Bool()
	}
	s, err := d.Number()
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errors.New("json: cannot unmarshal number " + s + " into Go value of type float64")
	}
	return f, nil
}
