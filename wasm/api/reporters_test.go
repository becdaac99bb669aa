package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
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
		{"empty", "# none yet\n\n", nil, "api: tokens t.txt: no tokens (want lines NAME TOKEN)"},
		{"one field", "alice\n", nil, "api: tokens t.txt:1: want NAME TOKEN, got 1 fields"},
		{"three fields", "\n\nalice " + aliceToken + " extra", nil, "api: tokens t.txt:3: want NAME TOKEN, got 3 fields"},
		{"short token", "alice abc", nil, `api: tokens t.txt:1: token of "alice": 3 characters, at least 16`},
		{"bad character", "alice " + aliceToken + "!", nil, `api: tokens t.txt:1: token of "alice": a character outside letters, digits and -._~+/ (then = padding)`},
		{"padding only", "alice " + strings.Repeat("=", 16), nil, `api: tokens t.txt:1: token of "alice": only '=' padding`},
		{"padding inside", "alice abc=def0123456789abcdef", nil, `api: tokens t.txt:1: token of "alice": a character outside letters, digits and -._~+/ (then = padding)`},
		{"bad name", "al:ice " + aliceToken, nil, `api: tokens t.txt:1: name "al:ice": only letters, digits and ._@- `},
		{"long name", strings.Repeat("a", 65) + " " + aliceToken, nil, "api: tokens t.txt:1: name of 65 bytes, at most 64"},
		{"duplicate name", "alice " + aliceToken + "\nalice " + bobToken, nil, `api: tokens t.txt:2: name "alice" already on line 1`},
		{"shared token", "alice " + aliceToken + "\n# b\nbob " + aliceToken, nil, `api: tokens t.txt:3: the token of "bob" is already on line 1: each reporter needs its own`},
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
			if !strings.HasPrefix(err.Error(), "api: tokens f") {
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
			ae, ok := err.(*authError)
			if !ok || ae.Status != tt.status || ae.Challenge != tt.challenge || source != "" {
				t.Errorf("Check = %q, %v (%+v); want %d with challenge %q", source, err, ae, tt.status, tt.challenge)
			}
		})
	}
}

// TestFeedbackRouteTokens posts feedback to a handler with tokens: a right token is recorded
// with its reporter's name as the source, a missing or wrong one is a 401 with
// WWW-Authenticate that records nothing; without tokens beyond loopback, a 403.
func TestFeedbackRouteTokens(t *testing.T) {
	tokens, err := ParseTokens("t", "alice "+aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"query": "egg", "used": ["pick-up-object"]}`
	tests := []struct {
		name      string
		auth      FeedbackAuth
		header    string
		status    int
		challenge string
		source    string // of the report stored; "" for none
	}{
		{"right token", FeedbackAuth{Tokens: tokens}, "Bearer " + aliceToken, 200, "", "token:alice"},
		{"missing token", FeedbackAuth{Tokens: tokens}, "", 401, `Bearer realm="caskg feedback"`, ""},
		{"wrong token", FeedbackAuth{Tokens: tokens}, "Bearer nope-nope-nope-nope", 401, `Bearer realm="caskg feedback", error="invalid_token"`, ""},
		{"no tokens beyond loopback", FeedbackAuth{}, "Bearer " + aliceToken, 403, "", ""},
		{"loopback", FeedbackAuth{Local: LoopbackSource}, "", 200, "", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &MemoryFeedback{}
			h, err := New(testlib.Sample(t), Options{Feedback: store, Reporters: tt.auth})
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/v1/feedback", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			h.ServeHTTP(w, r)
			if w.Code != tt.status || w.Header().Get("WWW-Authenticate") != tt.challenge {
				t.Errorf("answer %d %s, WWW-Authenticate %q; want %d, %q", w.Code, w.Body, w.Header().Get("WWW-Authenticate"), tt.status, tt.challenge)
			}
			got := store.Reports()
			switch {
			case tt.source == "" && len(got) != 0:
				t.Errorf("stored %+v, want nothing", got)
			case tt.source != "" && (len(got) != 1 || got[0].Source != tt.source):
				t.Errorf("stored %+v, want one report from %s", got, tt.source)
			}
			if strings.Contains(w.Body.String(), aliceToken) {
				t.Errorf("the answer repeats the token")
			}
		})
	}
	// A client cannot name its own source.
	h, _ := New(testlib.Sample(t), Options{Feedback: &MemoryFeedback{}, Reporters: FeedbackAuth{Local: LoopbackSource}})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/feedback", strings.NewReader(`{"query": "egg", "used": ["pick-up-object"], "source": "token:alice"}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	if w.Code != 400 {
		t.Errorf("a body naming its source: %d %s, want 400", w.Code, w.Body)
	}
}
