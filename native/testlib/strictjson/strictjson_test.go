package strictjson

import "testing"

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
