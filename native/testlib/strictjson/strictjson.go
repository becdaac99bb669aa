// Package strictjson is encoding/json decoding as strictly as the decoders built on
// graphs/jsontext decode, for the tests that hold those decoders to encoding/json (graphs/jsontext
// itself, wasm/internal/wire). It imports the standard library only, and nothing of this module,
// so that the tests of graphs may import it; it cannot sit under graphs, whose packages must not
// reach os (encoding/json does, through fmt).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Decode decodes the JSON text data into v with encoding/json as jsontext's decoders decode: a
// member v has no field for is an error, and so is anything but white space after the value.
// (encoding/json still matches keys without regard to case, which jsontext does not.)
func Decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if rest := data[min(int(d.InputOffset()), len(data)):]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return errors.New("data after the value")
	}
	return nil
}
