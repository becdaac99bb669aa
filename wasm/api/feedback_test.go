package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/service"
)

func TestCheckFeedback(t *testing.T) {
	known := map[string]bool{"heat-object": true, "pick-up-object": true}
	isSkill := func(name string) bool { return known[name] }
	many := make([]string, service.MaxUsed+1)
	for i := range many {
		many[i] = "heat-object"
	}
	long := strings.Repeat("ü", 60)
	tests := []struct {
		name string
		in   service.Feedback
		want string // "" for no error
	}{
		{"ok", service.Feedback{Query: "heat an egg", Used: []string{"pick-up-object", "heat-object"}, Outcome: "success"}, ""},
		{"no outcome", service.Feedback{Query: "heat an egg", Used: []string{"heat-object"}}, ""},
		{"failure", service.Feedback{Query: "heat an egg", Used: []string{"heat-object"}, Outcome: "failure"}, ""},
		{"repeated skill", service.Feedback{Query: "egg", Used: []string{"heat-object", "heat-object"}}, ""},
		{"at the limits", service.Feedback{Query: strings.Repeat("é", service.MaxQueryBytes/2), Used: many[:service.MaxUsed]}, ""},
		{"no query", service.Feedback{Used: []string{"heat-object"}}, `service: field "query": empty; give the task the skills were retrieved for`},
		{"blank query", service.Feedback{Query: " \n", Used: []string{"heat-object"}}, `service: field "query": empty; give the task the skills were retrieved for`},
		{"long query", service.Feedback{Query: strings.Repeat("x", service.MaxQueryBytes+1), Used: []string{"heat-object"}}, `service: field "query": 8193 bytes, at most 8192`},
		{"no used", service.Feedback{Query: "egg"}, `service: field "used": empty; name the skills used, as retrieve gave them`},
		{"empty used", service.Feedback{Query: "egg", Used: []string{}}, `service: field "used": empty; name the skills used, as retrieve gave them`},
		{"too many", service.Feedback{Query: "egg", Used: many}, `service: field "used": 101 names, at most 100`},
		{"unknown", service.Feedback{Query: "egg", Used: []string{"heat-object", "fly"}}, `service: field "used": not skills of this artifact: "fly"`},
		{"empty name", service.Feedback{Query: "egg", Used: []string{""}}, `service: field "used": not skills of this artifact: ""`},
		{"many unknown", service.Feedback{Query: "egg", Used: []string{"a", "heat-object", "b", "c", "d", "e"}},
			`service: field "used": not skills of this artifact: "a", "b", "c" and 2 more`},
		{"long unknown", service.Feedback{Query: "egg", Used: []string{long}},
			`service: field "used": not skills of this artifact: "` + strings.Repeat("ü", 40) + `…"`},
		{"bad outcome", service.Feedback{Query: "egg", Used: []string{"heat-object"}, Outcome: "meh"}, `service: field "outcome": "meh" is not "success" or "failure"`},
		{"outcome case", service.Feedback{Query: "egg", Used: []string{"heat-object"}, Outcome: "Success"}, `service: field "outcome": "Success" is not "success" or "failure"`},
		// The first field in order is named.
		{"all bad", service.Feedback{Outcome: "meh", Used: []string{"x"}}, `service: field "query": empty; give the task the skills were retrieved for`},
		{"used before outcome", service.Feedback{Query: "egg", Outcome: "meh", Used: []string{"x"}}, `service: field "used": not skills of this artifact: "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(service.CheckFeedback(tt.in, isSkill)); got != tt.want {
				t.Errorf("CheckFeedback = %q, want %q", got, tt.want)
			}
		})
	}
}

var decodeFeedbackTests = []struct {
	name string
	in   string
	want service.Feedback
	err  string
}{
	{"all", `{"query": "egg", "used": ["a", "b"], "outcome": "success"}`, service.Feedback{Query: "egg", Used: []string{"a", "b"}, Outcome: "success"}, ""},
	{"nulls", `{"query": null, "used": null, "outcome": null}`, service.Feedback{}, ""},
	{"empty", `{}`, service.Feedback{}, ""},
	{"used not an array", `{"used": "a"}`, service.Feedback{}, `json at offset 9: field "used": want an array, got a string`},
	{"used a number", `{"used": ["a", 3]}`, service.Feedback{}, `json at offset 15: field "used.1": want a string, got a number`},
	{"unknown field", `{"query": "egg", "skills": ["a"]}`, service.Feedback{}, `json at offset 17: field "skills": unknown field`},
	{"duplicate key", `{"outcome": "success", "outcome": "failure"}`, service.Feedback{}, `json at offset 23: field "outcome": key given twice`},
	{"two values", `{} {}`, service.Feedback{}, `json at offset 3: data after the JSON value`},
	{"not an object", `[]`, service.Feedback{}, `json at offset 0: want an object, got an array`},
}

func TestDecodeFeedback(t *testing.T) {
	for _, tt := range decodeFeedbackTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeFeedback([]byte(tt.in))
			if errText(err) != tt.err {
				t.Fatalf("decodeFeedback error %q, want %q", errText(err), tt.err)
			}
			if err == nil && !cmp.Equal(got, tt.want) {
				t.Errorf("decodeFeedback = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzDecodeFeedback(f *testing.F) {
	for _, tt := range decodeFeedbackTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fb, err := decodeFeedback(b)
		if err == nil {
			_ = service.CheckFeedback(fb, func(string) bool { return true })
		}
	})
}

func TestFeedbackRoute(t *testing.T) {
	tests := []struct {
		name, method, body string
		storeErr           error
		noStore            bool
		ctype              string // "": application/json
		status             int
		want               string // the whole body
		retryAfter         string
		stored             []service.Feedback
	}{
		{name: "recorded", method: "POST", body: `{"query": "heat an egg", "used": ["pick-up-object", "heat-object-in-microwave"], "outcome": "success"}`,
			status: 200, want: `{"status":"recorded"}`,
			stored: []service.Feedback{{Query: "heat an egg", Used: []string{"pick-up-object", "heat-object-in-microwave"}, Outcome: "success", Source: "loopback"}}},
		{name: "no store", noStore: true, method: "POST", body: `{"query": "egg", "used": ["pick-up-object"]}`, status: 501,
			want: `{"error":"api: feedback is not configured on this server: it records no reports (caskg serve records them with --feedback FILE)"}`},
		{name: "unknown skill", method: "POST", body: `{"query": "egg", "used": ["pick-up-object", "fly-to-the-moon"]}`, status: 400,
			want: `{"error":"service: field \"used\": not skills of this artifact: \"fly-to-the-moon\""}`},
		{name: "bad outcome", method: "POST", body: `{"query": "egg", "used": ["pick-up-object"], "outcome": "ok"}`, status: 400,
			want: `{"error":"service: field \"outcome\": \"ok\" is not \"success\" or \"failure\""}`},
		{name: "empty used", method: "POST", body: `{"query": "egg", "used": []}`, status: 400,
			want: `{"error":"service: field \"used\": empty; name the skills used, as retrieve gave them"}`},
		{name: "bad JSON", method: "POST", body: `{"query": "egg", "used": [1]}`, status: 400,
			want: `{"error":"api: body: json at offset 26: field \"used.0\": want a string, got a number"}`},
		{name: "empty body", method: "POST", status: 400,
			want: `{"error":"api: body: want a JSON request such as {\"query\": \"heat an egg\", \"used\": [\"heat-object-in-microwave\"], \"outcome\": \"success\"}"}`},
		{name: "null body", method: "POST", body: "null", status: 400,
			want: `{"error":"api: body: null; want a JSON object such as {\"query\": \"heat an egg\", \"used\": [\"heat-object-in-microwave\"], \"outcome\": \"success\"}"}`},
		{name: "duplicate key", method: "POST", body: `{"query": "egg", "used": ["pick-up-object"], "used": ["go-to-location"]}`, status: 400,
			want: `{"error":"api: body: json at offset 45: field \"used\": key given twice"}`},
		{name: "rate limited", method: "POST", body: `{"query": "egg", "used": ["pick-up-object"]}`, storeErr: &service.RateLimitError{RetryAfter: 1500 * time.Millisecond},
			status: 429, want: `{"error":"api: too many feedback reports; retry in 2s"}`, retryAfter: "2"},
		{name: "store fails", method: "POST", body: `{"query": "egg", "used": ["pick-up-object"]}`, storeErr: errors.New("disk full"),
			status: 500, want: `{"error":"api: feedback not recorded: disk full"}`},
		{name: "JSON with charset", method: "POST", ctype: "Application/JSON; charset=utf-8", body: `{"query": "egg", "used": ["pick-up-object"]}`,
			status: 200, want: `{"status":"recorded"}`, stored: []service.Feedback{{Query: "egg", Used: []string{"pick-up-object"}, Source: "loopback"}}},
		// What an HTML form of any origin can send without a preflight is refused.
		{name: "form type", method: "POST", ctype: "text/plain", body: `{"query": "egg", "used": ["pick-up-object"]}`, status: 415,
			want: `{"error":"api: Content-Type \"text/plain\": feedback takes application/json"}`},
		{name: "no type", method: "POST", ctype: "-", body: `{"query": "egg", "used": ["pick-up-object"]}`, status: 415,
			want: `{"error":"api: Content-Type \"\": feedback takes application/json"}`},
		{name: "GET", method: "GET", status: 405, want: `{"error":"api: GET /v1/feedback: allowed are POST, OPTIONS"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &service.MemoryFeedback{Err: tt.storeErr}
			opt := Options{Version: "test", Feedback: store, Reporters: service.FeedbackAuth{Local: service.LoopbackSource}}
			if tt.noStore {
				opt.Feedback = nil
			}
			h, err := New(testlib.Sample(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest(tt.method, "/v1/feedback", strings.NewReader(tt.body))
			switch tt.ctype {
			case "":
				r.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				r.Header.Set("Content-Type", tt.ctype)
			}
			h.ServeHTTP(w, r)
			if w.Code != tt.status || w.Body.String() != tt.want {
				t.Errorf("answer %d %s, want %d %s", w.Code, w.Body, tt.status, tt.want)
			}
			if got := w.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tt.retryAfter)
			}
			if !cmp.Equal(store.Reports(), tt.stored) {
				t.Errorf("stored %+v, want %+v", store.Reports(), tt.stored)
			}
		})
	}
}

func TestFeedbackPreflight(t *testing.T) {
	w := httptest.NewRecorder()
	sampleHandler(t).ServeHTTP(w, httptest.NewRequest("OPTIONS", "/v1/feedback", nil))
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Methods") != "POST, OPTIONS" ||
		w.Header().Get("Access-Control-Allow-Headers") != "Authorization, Content-Type" {
		t.Errorf("preflight %d, methods %q, headers %q", w.Code, w.Header().Get("Access-Control-Allow-Methods"), w.Header().Get("Access-Control-Allow-Headers"))
	}
}
