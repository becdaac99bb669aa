package jsontext

import "testing"

func TestKind(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "nothing"},
		{" \n\t", "nothing"},
		{`{"a":1}`, "an object"},
		{"  [1]", "an array"},
		{`"x"`, "a string"},
		{"true", "a boolean"},
		{"false", "a boolean"},
		{"null", "null"},
		{"-1.5e3", "a number"},
	}
	for _, tt := range tests {
		if got := Kind([]byte(tt.in)); got != tt.want {
			t.Errorf("Kind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
