// Package wire codes the engine's request and response as the JSON of `caskg query --json`
// without encoding/json (which, with fmt, would cost a WebAssembly module about a quarter of its
// compressed size). The codec in wire_gen.go is generated from engine.Request and
// engine.Response by the program in gen (run go generate after changing them; a test in gen
// fails until then); the WASI reactor and the edge worker share it, so every host reads and
// writes the same bytes.
package wire

//go:generate go run ./gen -o wire_gen.go

import (
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
	return appendEngineResponse(b, r)
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
