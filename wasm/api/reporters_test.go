package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/service"
)

// aliceToken is a token of the form ParseTokens takes (the service package tests the format).
const aliceToken = "alice-0123456789abcdef"

// TestFeedbackRouteTokens posts feedback to a handler with tokens: a right token is recorded
// with its reporter's name as the source, a missing or wrong one is a 401 with
// WWW-Authenticate that records nothing; without tokens beyond loopback, a 403.
func TestFeedbackRouteTokens(t *testing.T) {
	tokens, err := service.ParseTokens("t", "alice "+aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"query": "egg", "used": ["pick-up-object"]}`
	tests := []struct {
		name      string
		auth      service.FeedbackAuth
		header    string
		status    int
		challenge string
		source    string // of the report stored; "" for none
	}{
		{"right token", service.FeedbackAuth{Tokens: tokens}, "Bearer " + aliceToken, 200, "", "token:alice"},
		{"missing token", service.FeedbackAuth{Tokens: tokens}, "", 401, `Bearer realm="caskg feedback"`, ""},
		{"wrong token", service.FeedbackAuth{Tokens: tokens}, "Bearer nope-nope-nope-nope", 401, `Bearer realm="caskg feedback", error="invalid_token"`, ""},
		{"no tokens beyond loopback", service.FeedbackAuth{}, "Bearer " + aliceToken, 403, "", ""},
		{"loopback", service.FeedbackAuth{Local: service.LoopbackSource}, "", 200, "", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &service.MemoryFeedback{}
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
	h, _ := New(testlib.Sample(t), Options{Feedback: &service.MemoryFeedback{}, Reporters: service.FeedbackAuth{Local: service.LoopbackSource}})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/feedback", strings.NewReader(`{"query": "egg", "used": ["pick-up-object"], "source": "token:alice"}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	if w.Code != 400 {
		t.Errorf("a body naming its source: %d %s, want 400", w.Code, w.Body)
	}
}
