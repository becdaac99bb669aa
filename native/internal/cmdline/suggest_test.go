package cmdline

import "testing"

// TestSuggest checks the shared "did you mean" on its own: slips are caught, guesses are not.
func TestSuggest(t *testing.T) {
	words := []string{"build", "query", "inspect", "export", "eval", "mcp", "serve", "k", "ks", "json", "o"}
	tests := []struct {
		in   string
		want string // DidYouMean's answer
	}{
		{"querry", "; did you mean query?"},
		{"qeury", "; did you mean query?"},
		{"biuld", "; did you mean build?"},
		{"serv", "; did you mean serve?"},
		{"kk", "; did you mean k or ks?"},
		{"x", ""},
		{"", ""},
		{"frobnicate", ""},
		{"inspektor", "; did you mean inspect?"},
		{"explode", ""},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.in, words, ""); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"query", "querry", 1}, {"query", "qeury", 1}, {"kitten", "sitting", 3}, {"γ", "y", 1}} {
		if d := EditDistance(tt.a, tt.b); d != tt.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}
