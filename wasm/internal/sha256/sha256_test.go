package sha256

import (
	stdsha256 "crypto/sha256"
	"strings"
	"testing"
)

func TestSum(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"abc", "abc"},
		{"55 bytes, one block with the length", strings.Repeat("a", 55)},
		{"56 bytes, the length needs a second block", strings.Repeat("a", 56)},
		{"63 bytes", strings.Repeat("b", 63)},
		{"64 bytes", strings.Repeat("c", 64)},
		{"a token", "0123456789abcdef0123456789abcdef"},
		{"long", strings.Repeat("caskg ", 1000)},
	} {
		if got, want := Sum(tc.data), stdsha256.Sum256([]byte(tc.data)); got != want {
			t.Errorf("%s: Sum = %x, crypto/sha256 %x", tc.name, got, want)
		}
	}
}

func TestEqual(t *testing.T) {
	a, b := Sum("a"), Sum("a")
	c := b
	c[Size-1] ^= 1
	for _, tc := range []struct {
		name string
		x, y [Size]byte
		want bool
	}{{"same", a, b, true}, {"last bit differs", a, c, false}, {"other text", a, Sum("b"), false}} {
		if got := Equal(&tc.x, &tc.y); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzSum(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("x", 56), strings.Repeat("y", 130)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if got, want := Sum(data), stdsha256.Sum256([]byte(data)); got != want {
			t.Fatalf("Sum(%q) = %x, crypto/sha256 %x", data, got, want)
		}
	})
}
