package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/strictjson"
)

func TestAppendMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029", "\xff\xfe é 🍳", `\ / " '`, "<a href='x'>&amp;</a>"}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	}
	f64 := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125,
		5e-324, math.MaxFloat64, -2.5e-8, 0.10152390011}
	for _, f := range f64 {
		want, _ := json.Marshal(f)
		if got, err := AppendFloat(nil, f, 64); err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 64) = %s, %v; encoding/json gives %s", f, got, err, want)
		}
	}
	f32 := []float32{0, 0.61, 1e-6, 9.99e-7, 1e20, 1e21, 0.3, math.MaxFloat32, math.SmallestNonzeroFloat32}
	for _, f := range f32 {
		want, _ := json.Marshal(f)
		if got, err := AppendFloat(nil, float64(f), 32); err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 32) = %s, %v; encoding/json gives %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendFloat(nil, f, 64); err == nil {
			t.Errorf("AppendFloat(%v) succeeds; encoding/json refuses it", f)
		}
	}
}

func TestAppendKey(t *testing.T) {
	b := AppendKey([]byte("{"), `"a":`)
	b = append(b, '1')
	b = AppendKey(b, `"b":`)
	b = append(b, "[]}"...)
	if string(b) != `{"a":1,"b":[]}` {
		t.Errorf("got %s", b)
	}
}

// point is a small record decoded the way the reactor's generated code decodes.
type point struct {
	Name string    `json:"name"`
	N    int       `json:"n"`
	U    uint8     `json:"u"`
	F    float64   `json:"f"`
	F32  float32   `json:"f32"`
	B    bool      `json:"b"`
	L    []float32 `json:"l"`
	Sub  *point    `json:"sub"`
}

func decodePoint(d *Decoder, v *point) error {
	return d.Object(func(key string) error {
		var err error
		switch key {
		case "name":
			if !d.Null() {
				v.Name, err = d.String()
			}
		case "n":
			if !d.Null() {
				v.N, err = convert[int](d.Int(64))
			}
		case "u":
			if !d.Null() {
				v.U, err = convert[uint8](d.Uint(8))
			}
		case "f":
			if !d.Null() {
				v.F, err = d.Float(64)
			}
		case "f32":
			if !d.Null() {
				v.F32, err = convert[float32](d.Float(32))
			}
		case "b":
			if !d.Null() {
				v.B, err = d.Bool()
			}
		case "l":
			if d.Null() {
				v.L = nil
				break
			}
			v.L = []float32{}
			err = d.Array(func(int) error {
				x, err := convert[float32](d.Float(32))
				v.L = append(v.L, x)
				return err
			})
		case "sub":
			if d.Null() {
				v.Sub = nil
				break
			}
			if v.Sub == nil {
				v.Sub = new(point)
			}
			err = decodePoint(d, v.Sub)
		default:
			err = d.UnknownField()
		}
		return err
	})
}

// convert converts a number read at the width the decoder checks to the field's type.
func convert[T, X int | uint8 | float32 | int64 | uint64 | float64](x X, err error) (T, error) {
	return T(x), err
}

func unmarshalPoint(data []byte) (point, error) {
	var p point
	d := NewDecoder(data)
	if err := decodePoint(d, &p); err != nil {
		return p, err
	}
	return p, d.End()
}

func TestDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want point
	}{
		{"empty", `{}`, point{}},
		{"null", ` null `, point{}},
		{"scalars", ` {"name":"a\"b\u00e9\ud83c\udf73\ud800x\/","n":-12,"u":255,"f":-1.5e3,"f32":0.1,"b":true} `,
			point{Name: "a\"bé🍳\ufffdx/", N: -12, U: 255, F: -1500, F32: 0.1, B: true}},
		{"nested", `{"l":[1,2.5e-3],"sub":{"name":"in","l":[],"sub":null}}`,
			point{L: []float32{1, 2.5e-3}, Sub: &point{Name: "in", L: []float32{}}}},
		{"nulls", `{"name":null,"n":null,"l":null,"sub":null}`, point{}},
		{"invalid utf-8 replaced", "{\"name\":\"a\xffb\"}", point{Name: "a\ufffdb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := unmarshalPoint([]byte(tt.in))
			if err != nil {
				t.Fatalf("decoding %s: %v", tt.in, err)
			}
			var std point
			if err := json.Unmarshal([]byte(tt.in), &std); err != nil {
				t.Fatalf("encoding/json rejects %s: %v", tt.in, err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tt.want)
			sb, _ := json.Marshal(std)
			if !bytes.Equal(gb, wb) || !bytes.Equal(gb, sb) {
				t.Errorf("decoding %s:\n got %s\nwant %s\n std %s", tt.in, gb, wb, sb)
			}
		})
	}
}

// TestDecoderBeyondStd holds what the decoder reads that encoding/json refuses for the same
// types: an integer written as a float with no fraction, as a Python client writes one.
func TestDecoderBeyondStd(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want point
	}{
		{"zero fraction", `{"n":3.0}`, point{N: 3}},
		{"exponent", `{"n":1e2,"u":2.5e1}`, point{N: 100, U: 25}},
		{"negative", `{"n":-4.000}`, point{N: -4}},
		{"minus zero", `{"n":-0.0}`, point{}},
		{"uint at its bound", `{"u":255.0}`, point{U: 255}},
		{"nested", `{"sub":{"n":7.0}}`, point{Sub: &point{N: 7}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := unmarshalPoint([]byte(tt.in))
			if err != nil {
				t.Fatalf("decoding %s: %v", tt.in, err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tt.want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("decoding %s:\n got %s\nwant %s", tt.in, gb, wb)
			}
		})
	}
}

func TestDecoderErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "offset 0: want an object, got the end of the input"},
		{"not an object", `[1]`, "want an object, got an array"},
		{"unknown field", `{"n":1,"nn":2}`, `offset 7: field "nn": unknown field`},
		{"case differs", `{"N":1}`, `field "N": unknown field`},
		{"wrong type", `{"name":3}`, `field "name": want a string, got a number`},
		{"fraction for int", `{"n":1.5}`, `field "n": number 1.5 is not a whole number`},
		{"fraction for uint", `{"u":2.25e0}`, `field "u": number 2.25e0 is not a whole number`},
		{"overflow", `{"u":256}`, `number 256 is not a 8-bit unsigned integer`},
		{"overflow written as a float", `{"u":256.0}`, `number 256.0 is not a 8-bit unsigned integer`},
		{"negative uint written as a float", `{"u":-1.0}`, `number -1.0 is not a 8-bit unsigned integer`},
		{"int overflow written as a float", `{"n":1e19}`, `number 1e19 is not a 64-bit integer`},
		{"duplicate key", `{"n":1, "n":2}`, `offset 8: field "n": key given twice`},
		{"duplicate null", `{"sub":null,"sub":{}}`, `field "sub": key given twice`},
		{"nested duplicate", `{"sub":{"name":"a","b":true,"name":"b"}}`, `field "sub.name": key given twice`},
		{"float overflow", `{"f32":1e39}`, `out of range for a 32-bit float`},
		{"bad number", `{"n":-}`, "invalid number"},
		{"leading zero", `{"n":01}`, "want ',' or '}', got a number"},
		{"trailing data", `{"n":1} x`, "offset 8: data after the JSON value"},
		{"two values", `{}{}`, "data after the JSON value"},
		{"unterminated", `{"name":"abc`, "unterminated string"},
		{"control character", "{\"name\":\"a\nb\"}", "control character in string"},
		{"bad escape", `{"name":"\x"}`, "invalid escape"},
		{"bad unicode escape", `{"name":"\u12g4"}`, `invalid \u escape`},
		{"missing colon", `{"n" 1}`, "want ':', got a number"},
		{"missing comma", `{"n":1 "u":2}`, "want ',' or '}', got a string"},
		{"trailing comma", `{"n":1,}`, "want a string key, got '}'"},
		{"bad literal", `{"b":tru}`, "want a boolean"},
		{"bool as string", `{"b":"true"}`, "want a boolean, got a string"},
		{"element type", `{"l":[1,"x"]}`, `field "l.1": want a number, got a string`},
		{"deep", strings.Repeat(`{"sub":`, MaxDepth+1), "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := unmarshalPoint([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decoding %q: error = %v, want a SyntaxError containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"empty object", `{}`, true},
		{"duplicate key", `{"a":1,"a":2}`, true}, // refused by Object, not by Valid, as by encoding/json.Valid
		{"all kinds", ` {"a": [1, -2.5e+3, 0.1E-2, true, false, null, "x\u00e9\n"]} `, true},
		{"empty array", `[]`, true}, {"empty string", `""`, true}, {"zero", `0`, true}, {"minus zero", `-0`, true},
		{"white space", "\t\r\n null \n", true}, {"lone surrogate", `"\ud800"`, true},
		{"invalid utf-8", "\"\xff\"", true}, {"nested", `{"a":{"b":{}}}`, true},
		{"nothing", ``, false}, {"space only", ` `, false}, {"open", `{`, false}, {"close", `}`, false},
		{"trailing comma in array", `[1,]`, false}, {"trailing comma in object", `{"a":1,}`, false},
		{"missing colon", `{"a" 1}`, false}, {"bare key", `{a:1}`, false}, {"leading zero", `01`, false},
		{"bare point", `1.`, false}, {"leading point", `.5`, false}, {"bare exponent", `1e`, false},
		{"bare minus", `-`, false}, {"plus", `+1`, false}, {"short true", `tru`, false}, {"short null", `nul`, false},
		{"unterminated", `"abc`, false}, {"tab in string", "\"a\tb\"", false}, {"bad escape", `"\x"`, false},
		{"short unicode escape", `"\u12"`, false}, {"bad unicode escape", `"\u12g4"`, false},
		{"two values", `{} {}`, false}, {"missing comma", `[1 2]`, false}, {"NaN", `NaN`, false},
		{"MaxDepth", strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth), true},
		{"beyond MaxDepth", strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid([]byte(tt.in)); got != tt.want {
				t.Errorf("Valid(%.40q) = %v, want %v", tt.in, got, tt.want)
			}
			if std := json.Valid([]byte(tt.in)); std != tt.want {
				t.Errorf("json.Valid(%.40q) = %v: the table is wrong", tt.in, std)
			}
		})
	}
}

// FuzzDecoder holds the decoder to encoding/json with DisallowUnknownFields: whatever it accepts,
// encoding/json accepts with the same result; whatever encoding/json rejects, it rejects. Valid
// must agree with json.Valid.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"x","n":1,"l":[1,2],"sub":{"sub":{}}}`, `{"sub":null}`,
		`{"name":"\ud83c\udf73\u00e9\ud800\u0041"}`, `{"f":1e-7,"f32":3.4e39}`, `{"u":300}`, `{"Name":"x"}`,
		`[]`, `"x"`, `{"l":[1,2]} `, `null`, "{\"name\":\"\xed\xa0\x80\"}",
		`{"n":3.0,"u":2e0}`, `{"n":1.5}`, `{"n":1,"n":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := strictjson.Differ(data, unmarshalPoint, samePoint, refusal); d != "" {
			t.Fatal("jsontext " + d)
		}
		if Valid(data) != json.Valid(data) {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, Valid(data), json.Valid(data))
		}
	})
}

// samePoint reports whether a and b encode alike.
func samePoint(a, b point) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

// refusal is the message of err, if it is a SyntaxError.
func refusal(err error) (string, bool) {
	var se *SyntaxError
	if !errors.As(err, &se) {
		return "", false
	}
	return se.Msg, true
}

// FuzzAppend holds AppendString and AppendFloat to encoding/json.
func FuzzAppend(f *testing.F) {
	f.Add("heat-object", 0.1015, float32(0.61))
	f.Add("a<b>\u2028\xff\x00", 1e-7, float32(1e21))
	f.Fuzz(func(t *testing.T, s string, f64 float64, f32 float32) {
		if want, _ := json.Marshal(s); !bytes.Equal(AppendString(nil, s), want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json gives %s", s, AppendString(nil, s), want)
		}
		for _, c := range []struct {
			v    any
			f    float64
			bits int
		}{{f64, f64, 64}, {f32, float64(f32), 32}} {
			want, wantErr := json.Marshal(c.v)
			got, err := AppendFloat(nil, c.f, c.bits)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("AppendFloat(%v, %d) = %s, %v; encoding/json gives %s, %v", c.f, c.bits, got, err, want, wantErr)
			}
		}
	})
}
