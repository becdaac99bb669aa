package graphs

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{}`, true}, {` {"a": [1, -2.5e+3, 0.1E-2, true, false, null, "x\u00e9\n"]} `, true},
		{`[]`, true}, {`""`, true}, {`0`, true}, {`-0`, true}, {"\t\r\n null \n", true},
		{`"\ud800"`, true}, {"\"\xff\"", true}, {`{"a":{"b":{}}}`, true},
		{``, false}, {` `, false}, {`{`, false}, {`}`, false}, {`[1,]`, false}, {`{"a":1,}`, false},
		{`{"a" 1}`, false}, {`{a:1}`, false}, {`01`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false},
		{`-`, false}, {`+1`, false}, {`tru`, false}, {`nul`, false}, {`"abc`, false}, {"\"a\tb\"", false},
		{`"\x"`, false}, {`"\u12"`, false}, {`"\u12g4"`, false}, {`{} {}`, false}, {`[1 2]`, false},
		{`NaN`, false}, {`[` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 10000), true},
		{strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001), false},
	} {
		if got := validJSON([]byte(c.in)); got != c.want {
			t.Errorf("validJSON(%.40q) = %v, want %v", c.in, got, c.want)
		}
		if std := json.Valid([]byte(c.in)); std != c.want {
			t.Errorf("json.Valid(%.40q) = %v: the table is wrong", c.in, std)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x"]}`, `[`, `"\u00e9"`, `-0.0e+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
		if !json.Valid(b) {
			return
		}
		var want map[string]any
		wantErr := json.Unmarshal(b, &want)
		got, err := unmarshalParams(b)
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
	for _, in := range []string{`null`, `{"a":1,"a":[true,null,"\ud83d\ude00\ud800x"]}`, `[1]`, `"s"`, `1`, `false`, `{"a":1e400}`} {
		var want map[string]any
		werr := json.Unmarshal([]byte(in), &want)
		got, err := unmarshalParams([]byte(in))
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || werr == nil && string(gb) != string(wb) {
			t.Errorf("unmarshalParams(%s) = %s, %v; json.Unmarshal %s, %v", in, gb, err, wb, werr)
		}
	}
}
