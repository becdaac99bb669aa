package engine

import (
	"strings"
	"testing"
)

func TestCleanTextMatchesStrings(t *testing.T) {
	for _, s := range []string{
		"", "plain", "a\r\nb", "\r", "\xff", "\xff\xfe", "\xff\r\xff", "a\xffb\xfe\xfdc",
		"\uFFFD\xff", "é\x80", "\xe2\x82", "\xe2\x82\xac\r", "\xf0\x9f\x98\x80\xf0", "\r\r\xc3",
	} {
		want := strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r", "")
		if got := cleanText(s); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzCleanText(f *testing.F) {
	f.Add("a\r\n\xffb")
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r", "")
		if got := cleanText(s); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", s, got, want)
		}
	})
}
