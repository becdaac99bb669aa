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
	"math"
	"strconv"
	"strings"
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

// WholeNumber reports whether err is encoding/json refusing a number with a zero fraction or an
// exponent (3.0, 1e2) for an integer field: jsontext's decoders read those, as JSON Schema's
// integer allows, so a test that holds them to encoding/json lets them differ there.
func WholeNumber(err error) bool {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || !strings.HasPrefix(te.Value, "number ") {
		return false
	}
	f, perr := strconv.ParseFloat(strings.TrimPrefix(te.Value, "number "), 64)
	return perr == nil && f == math.Trunc(f)
}

// Refusals are the messages of jsontext's refusals of what encoding/json accepts: a key no
// field matches exactly (encoding/json folds case) and a key given twice (encoding/json keeps
// the last).
var Refusals = []string{"unknown field", "key given twice"}
