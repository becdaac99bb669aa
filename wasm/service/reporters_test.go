package service

import (
	"strings"
	"testing"
)

const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob+/0123456789ABCDEF=="
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name, in string
		names    []string
		err      string
	}{
		{"two, comments and blanks", "# reporters\n\nalice " + aliceToken + "\r\n  bob\t" + bobToken + "  \n", []string{"alice", "bob"}, ""},
		{"semicolons", "alice " + aliceToken + ";bob " + bobToken, []string{"alice", "bob"}, ""},
		{"empty", "# none yet\n\n", nil, "service: tokens t.txt: no tokens (want lines NAME TOKEN)"},
		{"one field", "alice\n", nil, "service: tokens t.txt:1: want NAME TOKEN, got 1 fields"},
		{"three fields", "\n\nalice " + aliceToken + " extra", nil, "service: tokens t.txt:3: want NAME TOKEN, got 3 fields"},
		{"short token", "alice abc", nil, `service: tokens t.txt:1: token of "alice": 3 characters, at least 16`},
		{"bad character", "alice " + aliceToken + "!", nil, `service: tokens t.txt:1: token of "alice": a character outside letters, digits and -._~+/ (then = padding)`},
		{"padding only", "alice " + strings.Repeat("=", 16), nil, `service: tokens t.txt:1: token of "alice": only '=' padding`},
		{"padding inside", "alice abc=def0123456789abcdef", nil, `service: tokens t.txt:1: token of "alice": a character outside letters, digits and -._~+/ (then = padding)`},
		{"bad name", "al:ice " + aliceToken, nil, `service: tokens t.txt:1: name "al:ice": only letters, digits and ._@- `},
		{"long name", strings.Repeat("a", 65) + " " + aliceToken, nil, "service: tokens t.txt:1: name of 65 bytes, at most 64"},
		{"duplicate name", "alice " + aliceToken + "\nalice " + bobToken, nil, `service: tokens t.txt:2: name "alice" already on line 1`},
		{"shared token", "alice " + aliceToken + "\n# b\nbob " + aliceToken, nil, `service: tokens t.txt:3: the token of "bob" is already on line 1: each reporter needs its own`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens("t.txt", tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %s", err, tt.err)
				}
				if strings.Contains(err.Error(), aliceToken) || strings.Contains(err.Error(), bobToken) {
					t.Errorf("the error repeats a token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.names, ",") != strings.Join(tt.names, ",") {
				t.Errorf("names %v, want %v", got.names, tt.names)
			}
		})
	}
}

func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"alice " + aliceToken, "# c\n\nbob " + bobToken + ";x y", "a b c", "a " + strings.Repeat("=", 20), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tok, err := ParseTokens("f", in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "service: tokens f") {
				t.Errorf("error without its source: %v", err)
			}
			return
		}
		if tok.Len() == 0 {
			t.Error("no tokens and no error")
		}
	})
}

func TestFeedbackAuthCheck(t *testing.T) {
	tokens, err := ParseTokens("t", "alice "+aliceToken+"\nbob "+bobToken)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		auth      FeedbackAuth
		header    string
		source    string
		status    int
		challenge string
	}{
		{"loopback, no tokens", FeedbackAuth{Local: LoopbackSource}, "", "loopback", 0, ""},
		{"loopback, no tokens, any header", FeedbackAuth{Local: LoopbackSource}, "Bearer whatever", "loopback", 0, ""},
		{"stdio", FeedbackAuth{Local: "mcp:stdio"}, "", "mcp:stdio", 0, ""},
		{"beyond loopback, no tokens", FeedbackAuth{}, "Bearer " + aliceToken, "", 403, ""},
		{"right token", FeedbackAuth{Tokens: tokens}, "Bearer " + aliceToken, "token:alice", 0, ""},
		{"scheme in any case", FeedbackAuth{Tokens: tokens}, "bearer  " + bobToken, "token:bob", 0, ""},
		{"tokens on loopback too", FeedbackAuth{Tokens: tokens, Local: LoopbackSource}, "", "", 401, `Bearer realm="caskg feedback"`},
		{"missing", FeedbackAuth{Tokens: tokens}, "", "", 401, `Bearer realm="caskg feedback"`},
		{"wrong", FeedbackAuth{Tokens: tokens}, "Bearer " + aliceToken + "x", "", 401, `Bearer realm="caskg feedback", error="invalid_token"`},
		{"a prefix", FeedbackAuth{Tokens: tokens}, "Bearer " + aliceToken[:16], "", 401, `Bearer realm="caskg feedback", error="invalid_token"`},
		{"basic", FeedbackAuth{Tokens: tokens}, "Basic YWxpY2U6eA==", "", 401, `Bearer realm="caskg feedback", error="invalid_request"`},
		{"no token after the scheme", FeedbackAuth{Tokens: tokens}, "Bearer", "", 401, `Bearer realm="caskg feedback", error="invalid_request"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source, err := tt.auth.Check(tt.header)
			if tt.status == 0 {
				if err != nil || source != tt.source {
					t.Errorf("Check = %q, %v; want %q", source, err, tt.source)
				}
				return
			}
			ae, ok := err.(*AuthError)
			if !ok || ae.Status != tt.status || ae.Challenge != tt.challenge || source != "" {
				t.Errorf("Check = %q, %v (%+v); want %d with challenge %q", source, err, ae, tt.status, tt.challenge)
			}
		})
	}
}
