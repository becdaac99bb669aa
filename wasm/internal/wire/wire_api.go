// Package wire codes the engine's request and response as the JSON of `caskg query --json`
// without encoding/json (which, with fmt, would cost a WebAssembly module about a quarter of its
// compressed size), and the response also as a tape of tokens that a JavaScript host reads
// without parsing text (tape.go). The codec in wire_gen.go is generated from engine.Request and
// engine.Response by the program in gen (run go generate after changing them; a test in gen
// fails until then); the WASI reactor and the edge worker share it, so every host reads and
// writes the same bytes.
package wire

//go:generate go run ./gen -o wire_gen.go

import (
	"strconv"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
)

// DecodeRequest decodes the request JSON b: every field engine.Request declares, and nothing
// else, so a misspelt option is an error rather than silently ignored. Errors are jsontext's,
// naming the byte offset and the field.
func DecodeRequest(b []byte) (engine.Request, error) {
	var q engine.Request
	d := jsontext.NewDecoder(b)
	if err := decodeEngineRequest(d, &q); err != nil {
		return q, err
	}
	return q, d.End()
}

// AppendResponse appends r as JSON, byte for byte what encoding/json.Marshal gives.
func AppendResponse(b []byte, r *engine.Response) ([]byte, error) {
	e := encoder{b: b, start: len(b)}
	encodeEngineResponse(&e, "", r)
	return e.b, e.err
}

// AppendResponseTape appends r as the tape (tape.go): for a host that builds the JSON's value
// from it, where formatting and parsing the JSON text would cost more than the rest of the
// answer's way out.
func AppendResponseTape(b []byte, r *engine.Response) ([]byte, error) {
	e := encoder{b: b, tape: true}
	encodeEngineResponse(&e, "", r)
	return e.b, e.err
}

// decodeStrings decodes a JSON array of strings into *v, as encoding/json does: null is nil,
// a null element the empty string. It is the one decoder of every []string field the generated
// code reads (a request's filter lists): a copy per field cost the WebAssembly module about
// 1 KB each.
func decodeStrings(d *jsontext.Decoder, v *[]string) error {
	if d.Null() {
		*v = nil
		return nil
	}
	*v = []string{}
	return d.Array(func(int) error {
		var x string
		var err error
		if !d.Null() {
			x, err = d.String()
		}
		if err == nil {
			*v = append(*v, x)
		}
		return err
	})
}

// decodeFloat32s decodes a JSON array of numbers into *v, as encoding/json does: null is nil, a
// null element 0.
func decodeFloat32s(d *jsontext.Decoder, v *[]float32) error {
	if d.Null() {
		*v = nil
		return nil
	}
	*v = []float32{}
	return d.Array(func(int) error {
		var x float64
		var err error
		if !d.Null() {
			x, err = d.Float(32)
		}
		if err == nil {
			*v = append(*v, float32(x))
		}
		return err
	})
}

// member is the place of key among names, or -1.
func member(key string, names []string) int {
	for i, name := range names {
		if name == key {
			return i
		}
	}
	return -1
}

// decodeString, decodeBool, decodeInt and decodeFloat decode a value of their type into *v, as
// encoding/json does: null leaves *v as it is. The generated code calls them for every field of
// a plain type.
func decodeString(d *jsontext.Decoder, v *string) (err error) {
	if !d.Null() {
		var x string
		if x, err = d.String(); err == nil {
			*v = x
		}
	}
	return err
}

func decodeBool(d *jsontext.Decoder, v *bool) (err error) {
	if !d.Null() {
		var x bool
		if x, err = d.Bool(); err == nil {
			*v = x
		}
	}
	return err
}

func decodeInt(d *jsontext.Decoder, v *int) (err error) {
	if !d.Null() {
		var x int64
		if x, err = d.Int(strconv.IntSize); err == nil {
			*v = int(x)
		}
	}
	return err
}

func decodeFloat(d *jsontext.Decoder, v *float64) (err error) {
	if !d.Null() {
		var x float64
		if x, err = d.Float(64); err == nil {
			*v = x
		}
	}
	return err
}
