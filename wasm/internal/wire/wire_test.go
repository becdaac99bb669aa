package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/native/testlib/strictjson"
	"github.com/caskg/caskg/wasm/engine"
)

// fill sets every field reachable from v to a non-zero value derived from n, so that comparing
// with encoding/json covers each field the engine declares, including ones added later.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(n) + " <é\u2028>")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(n%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.1015239)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n*3+i)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n*7+i)
			}
		}
	}
}

func TestWireEncodeMatchesEncodingJSON(t *testing.T) {
	var full engine.Response
	fill(reflect.ValueOf(&full).Elem(), 1)
	responses := []engine.Response{
		full,
		{},
		{Results: []engine.Result{{Name: "tiny", Score: 1.5e-9}, {Name: "big", Score: 1e21}, {Name: "zero"}}},
	}
	for _, resp := range responses {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendResponse(nil, &resp)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendResponse = %s, %v\nencoding/json gives %s", got, err, want)
		}
	}
}

func TestWireDecodeMatchesEncodingJSON(t *testing.T) {
	var full engine.Request
	fill(reflect.ValueOf(&full).Elem(), 1)
	in, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(in)
	if err != nil {
		t.Fatalf("DecodeRequest(%s): %v", in, err)
	}
	if !reflect.DeepEqual(got, full) {
		t.Errorf("DecodeRequest(%s) = %+v, want %+v", in, got, full)
	}
}

// FuzzWireDecode holds the request decoder to encoding/json with DisallowUnknownFields.
// refusal is the message of err, if it is a jsontext.SyntaxError.
func refusal(err error) (string, bool) {
	var se *jsontext.SyntaxError
	if !errors.As(err, &se) {
		return "", false
	}
	return se.Msg, true
}

func FuzzWireDecode(f *testing.F) {
	for _, s := range []string{`{"query":"heat an egg","k":3,"seeds":2,"gamma":0.3,"no_graph":true}`,
		`{"query":null}`, `{"k":1.5}`, `{"Query":"x"}`, `{"query":"\ud83c\udf73"} `, `null`, `{}`,
		`{"query":"x","filter":{"allow":["gh__*",null],"deny":null,"namespaces":["gh"]}}`,
		`{"filter":null}`, `{"filter":{"tags":["a"]}}`, `{"filter":{"allow":"a*"}}`, `{"filter":[]}`,
		`{"query":"x","k":3.0,"seeds":2e0}`, `{"query":"x","k":1,"k":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		same := func(a, b engine.Request) bool { return reflect.DeepEqual(a, b) }
		if d := strictjson.Differ(data, DecodeRequest, same, refusal); d != "" {
			t.Fatal("DecodeRequest " + d)
		}
	})
}
