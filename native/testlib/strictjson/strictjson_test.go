package strictjson

import (
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	tests := []struct {
		name string
		in   string
		want string // the error's text, "" for none
	}{
		{"object", `{"x":1}`, ""},
		{"white space after", "{\"x\":1} \t\r\n", ""},
		{"keys without regard to case", `{"X":1}`, ""},
		{"unknown member", `{"x":1,"y":2}`, `json: unknown field "y"`},
		{"second value", `{"x":1} {}`, "data after the value"},
		{"garbage after", `{"x":1}x`, "data after the value"},
		{"not JSON", `{"x":}`, "invalid character '}' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p point
			err := Decode([]byte(tt.in), &p)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want || err == nil && p.X != 1 {
				t.Errorf("Decode(%q) = %+v, %q; want x 1, %q", tt.in, p, got, tt.want)
			}
		})
	}
}

// TestDiffer holds Differ to each way a decoder may agree with encoding/json or not.
func TestDiffer(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	std := func(data []byte) (point, error) {
		var p point
		return p, Decode(data, &p)
	}
	zero := func([]byte) (point, error) { return point{}, nil }
	refuse := func(msg string) func([]byte) (point, error) {
		return func([]byte) (point, error) { return point{}, errors.New(msg) }
	}
	same := func(a, b point) bool { return a == b }
	refusal := func(err error) (string, bool) { return err.Error(), true }
	for _, c := range []struct {
		name, in string
		decode   func([]byte) (point, error)
		want     string // in the report; "" for none
	}{
		{"agree on a value", `{"x":1}`, std, ""},
		{"agree on a refusal", `{"x":}`, refuse("bad"), ""},
		{"a whole number", `{"x":1.0}`, zero, ""},
		{"an allowed refusal", `{"x":1}`, refuse("key given twice"), ""},
		{"another value", `{"x":1}`, zero, "got {X:0}, encoding/json {X:1}"},
		{"accepts what encoding/json refuses", `{"x":"a"}`, zero, `accepts "{\"x\":\"a\"}"`},
		{"another refusal", `{"x":1}`, refuse("bad"), "rejects"},
	} {
		got := Differ([]byte(c.in), c.decode, same, refusal)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
