package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
)

// tapeJSON is the JSON text of the tape t, written as tape.go says a reader builds its value:
// the test's reader, held to encoding/json below. names gets the name of each key id.
func tapeJSON(t []byte, names map[byte]string) ([]byte, error) {
	var b []byte
	u32 := func(i int) int { return int(t[i]) | int(t[i+1])<<8 | int(t[i+2])<<16 | int(t[i+3])<<24 }
	for i := 0; i < len(t); {
		tok := t[i]
		i++
		if tok != '}' && tok != ']' && len(b) > 0 {
			if c := b[len(b)-1]; c != '{' && c != '[' && c != ':' {
				b = append(b, ',')
			}
		}
		switch tok {
		case 'k':
			n := int(t[i+1])
			name := string(t[i+2 : i+2+n])
			if old, ok := names[t[i]]; ok && old != name {
				return nil, &json.UnsupportedValueError{Str: "key id " + strconv.Itoa(int(t[i])) + " names " + old + " and " + name}
			}
			names[t[i]] = name
			b = append(append(append(b, '"'), name...), '"', ':')
			i += 2 + n
		case 'd', 'i':
			u := uint64(u32(i)) | uint64(u32(i+4))<<32
			i += 8
			if tok == 'i' {
				b = strconv.AppendInt(b, int64(u), 10)
			} else if f := math.Float64frombits(u); math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, &json.UnsupportedValueError{Str: "d token " + strconv.FormatFloat(f, 'g', -1, 64)}
			} else {
				b, _ = jsontext.AppendFloat(b, f, 64)
			}
		case 's', 'x':
			n := u32(i)
			s := t[i+4 : i+4+n]
			i += 4 + n
			if tok == 'x' {
				b = append(b, s...)
			} else {
				b = jsontext.AppendString(b, string(s))
			}
		case 't':
			b = append(b, "true"...)
		case 'f':
			b = append(b, "false"...)
		case 'n':
			b = append(b, "null"...)
		case '{', '}', '[', ']':
			b = append(b, tok)
		default:
			return nil, &json.UnsupportedValueError{Str: "token " + strconv.Quote(string(tok)) + " at " + strconv.Itoa(i-1)}
		}
	}
	return b, nil
}

// TestTapeMatchesJSON holds the tape to the JSON: every field the engine declares (fill), a name
// of invalid UTF-8, the keys' ids, and the error for a float JSON cannot hold.
func TestTapeMatchesJSON(t *testing.T) {
	var full engine.Response
	fill(reflect.ValueOf(&full).Elem(), 1)
	responses := []engine.Response{
		full,
		{},
		{Results: []engine.Result{{Name: "bad \xff\xe2\x82 utf-8", Score: 1.5e-9, Via: []engine.Via{{From: "a", Weight: 0.1}}}, {Name: "big", Score: 1e21}, {Name: "zero"}}, Pushes: -3},
	}
	names := map[byte]string{} // a key's id names it alone, in every response
	for _, resp := range responses {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		tape, err := AppendResponseTape([]byte("prefix"), &resp)
		if err != nil || !bytes.HasPrefix(tape, []byte("prefix")) {
			t.Fatalf("AppendResponseTape: %v", err)
		}
		got, err := tapeJSON(tape[len("prefix"):], names)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the tape reads as %s, %v\nencoding/json gives %s", got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		for _, resp := range []engine.Response{{Match: f}, {Results: []engine.Result{{Via: []engine.Via{{Weight: float32(f)}}}}}} {
			_, jsonErr := AppendResponse(nil, &resp)
			_, tapeErr := AppendResponseTape(nil, &resp)
			if jsonErr == nil || tapeErr == nil || jsonErr.Error() != tapeErr.Error() {
				t.Errorf("%v: AppendResponse's error %v, AppendResponseTape's %v", f, jsonErr, tapeErr)
			}
		}
	}
}
