// Package wire codes the engine's request and response as the JSON of `caskg query --json`
// without encoding/json (which, with fmt, would cost a WebAssembly module about a quarter of its
// compressed size). The codec in wire.go is generated from engine.Request and engine.Response
// by TestWireUpToDate; the WASI reactor and the edge worker share it, so every host reads and
// writes the same bytes.
package wire

import (
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/internal/tinyjson"
)

// DecodeRequest decodes the request JSON b: every field engine.Request declares, and nothing
// else, so a misspelt option is an error rather than silently ignored. Errors are tinyjson's,
// naming the byte offset and the field.
func DecodeRequest(b []byte) (engine.Request, error) {
	var q engine.Request
	d := tinyjson.NewDecoder(b)
	if err := decodeEngineRequest(d, &q); err != nil {
		return q, err
	}
	return q, d.End()
}

// AppendResponse appends r as JSON, byte for byte what encoding/json.Marshal gives.
func AppendResponse(b []byte, r *engine.Response) ([]byte, error) {
	return appendEngineResponse(b, r)
}
