package jsontext

import "testing"

func TestInvalidUTF8(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"", -1}, {"heat an egg", -1}, {"café 数据 😀", -1}, {"\xff", 0}, {"caf\xe9", 3},
		{"数\xe6\x95", 3},    // a cut sequence
		{"\xed\xa0\x80", 0}, // a surrogate
		{"ok \xc0\xaf", 3},  // an overlong form
	} {
		if got := InvalidUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("InvalidUTF8(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
