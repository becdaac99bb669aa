package graphs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs/jsontext"
)

// FuzzParams holds the build parameters' decoder and encoder to encoding/json on every input
// Decode lets through: whatever jsontext.Valid accepts.
func FuzzParams(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x"]}`, `[`, `"\u00e9"`, `-0.0e+1`, `{"a":1e400}`,
		`{"a":{"b":null,"c":[true,false]},"d":"\ud83d\ude00\ud800x"}`, `null`, `{"0":{"00":[]},"0":"0"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := jsontext.Valid(b), json.Valid(b); got != want {
			t.Fatalf("jsontext.Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
		if !json.Valid(b) {
			return
		}
		var want map[string]any
		wantErr := json.Unmarshal(b, &want)
		got, err := unmarshalParams(b)
		if err != nil && wantErr == nil && strings.Contains(err.Error(), "key given twice") {
			return // refused on purpose: encoding/json keeps the last of a repeated key
		}
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("unmarshalParams(%q) error %v, json.Unmarshal %v", b, err, wantErr)
		}
		if err != nil {
			return
		}
		gb, gerr := marshalParams(got)
		wb, werr := json.Marshal(want)
		if string(gb) != string(wb) || (gerr != nil) != (werr != nil) {
			t.Fatalf("params %q: marshalParams gives %s (%v), json.Marshal %s (%v)", b, gb, gerr, wb, werr)
		}
	})
}

func TestParamsMatchEncodingJSON(t *testing.T) {
	type variant string
	p := map[string]any{
		"variant": variant("publish-all"), "cap": 12, "tau": 0.35, "tiny": 1e-7, "big": 1e21, "f32": float32(0.1),
		"html": "<a&b>\u2028\xff", "nested": map[string]any{"z": nil, "a": []int{1, 2}}, "bytes": []byte("hi!?"),
		"ints": map[int]string{10: "x", 9: "y"}, "nil": []string(nil), "arr": [2]bool{true, false}, "neg": -3,
		"u": uint64(1 << 63), "ptr": new(int),
	}
	got, err := marshalParams(p)
	want, werr := json.Marshal(p)
	if err != nil || werr != nil || string(got) != string(want) {
		t.Fatalf("marshalParams = %s, %v\njson.Marshal  = %s, %v", got, err, want, werr)
	}
	for _, bad := range []any{struct{}{}, make(chan int), complex(1, 2)} {
		_, err := marshalParams(map[string]any{"x": bad})
		_, werr := json.Marshal(map[string]any{"x": bad})
		if err == nil || werr != nil && !strings.Contains(err.Error(), "json: unsupported") {
			t.Errorf("marshalParams(%T) error %v, json.Marshal %v", bad, err, werr)
		}
	}
	deep := `{"a":` + strings.Repeat(`[`, jsontext.MaxDepth-1) + strings.Repeat(`]`, jsontext.MaxDepth-1) + `}`
	for _, in := range []string{`null`, `{"a":[true,null,"\ud83d\ude00\ud800x"]}`, `[1]`, `"s"`, `1`, `false`, `{"a":1e400}`,
		` {"b":[{"c":[1e400]}]}`, deep} {
		var want map[string]any
		werr := json.Unmarshal([]byte(in), &want)
		got, err := unmarshalParams([]byte(in))
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || werr == nil && string(gb) != string(wb) {
			t.Errorf("unmarshalParams(%s) = %s, %v; json.Unmarshal %s, %v", in, gb, err, wb, werr)
		}
	}
	// Where it parts from encoding/json, which keeps the last: no writer of artifacts repeats a
	// key, so a repeated one is damage, refused as jsontext refuses it everywhere.
	if _, err := unmarshalParams([]byte(`{"a":1,"a":2}`)); err == nil || !strings.Contains(err.Error(), `field "a": key given twice`) {
		t.Errorf("unmarshalParams of a repeated key: error %v, want one naming the key", err)
	}
}
