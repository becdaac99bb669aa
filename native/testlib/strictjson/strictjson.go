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
	"fmt"
	"math"
	"slices"
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

// Differ reports how a decoder built on jsontext, decode, and encoding/json (Decode) disagree
// on data, or "" where they agree: both accept it with values same calls equal, or both refuse
// it, or they differ only where they may: the decoder reads a whole number for an integer
// (WholeNumber), or refuses what encoding/json accepts for one of Refusals, the message that
// refusal gives of the decoder's error (ok false for no refusal of jsontext's).
func Differ[T any](data []byte, decode func([]byte) (T, error), same func(got, std T) bool, refusal func(error) (msg string, ok bool)) string {
	got, err := decode(data)
	var std T
	stdErr := Decode(data, &std)
	switch {
	case err == nil && stdErr != nil:
		if !WholeNumber(stdErr) {
			return fmt.Sprintf("accepts %q, encoding/json says %v", data, stdErr)
		}
	case err == nil:
		if !same(got, std) {
			return fmt.Sprintf("decoding %q: got %+v, encoding/json %+v", data, got, std)
		}
	case stdErr == nil:
		if msg, ok := refusal(err); !ok || !slices.Contains(Refusals, msg) {
			return fmt.Sprintf("rejects %q (%v), encoding/json accepts it", data, err)
		}
	}
	return ""
}
