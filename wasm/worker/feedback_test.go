package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/service"
)

// memKV is a KV namespace in memory: what put stored, or err for every put.
type memKV struct {
	mu   sync.Mutex
	keys []string
	vals map[string]string
	err  error
}

func (m *memKV) put(_ context.Context, key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if m.vals == nil {
		m.vals = map[string]string{}
	}
	m.keys = append(m.keys, key)
	m.vals[key] = value
	return nil
}

// serveLine is caskg serve's trace line (native/serve), as encoding/json writes it.
type serveLine struct {
	ID      string   `json:"id"`
	Skills  []string `json:"skills"`
	Outcome string   `json:"outcome,omitempty"`
	Task    string   `json:"task,omitempty"`
	Source  string   `json:"source,omitempty"`
}

var keyPattern = regexp.MustCompile(`^fb-\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{16}$`)

func TestTraceLine(t *testing.T) {
	tests := []struct {
		name      string
		fb        service.Feedback
		queryText bool
	}{
		{"success", service.Feedback{Query: "heat an egg", Used: []string{"a", "b"}, Outcome: "success"}, false},
		{"no outcome", service.Feedback{Query: "heat an egg", Used: []string{"a"}}, false},
		{"query text", service.Feedback{Query: "heat <an> \"egg\" & \u2028 \x01 ✓", Used: []string{"a"}, Outcome: "failure"}, true},
		{"markup in names", service.Feedback{Query: "q", Used: []string{"<b>", "a&b", `q"uote\`}}, true},
		{"source", service.Feedback{Query: "q", Used: []string{"a"}, Outcome: "success", Source: "token:a<b>&c"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(traceLine("fb-x", tc.fb, tc.queryText))
			want := serveLine{ID: "fb-x", Skills: tc.fb.Used, Outcome: tc.fb.Outcome, Source: tc.fb.Source}
			if tc.queryText {
				want.Task = tc.fb.Query
			}
			b, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(b)+"\n" {
				t.Errorf("trace line\n%s\nencoding/json writes\n%s", got, b)
			}
		})
	}
}

func TestKVFeedback(t *testing.T) {
	clock := time.Date(2026, 11, 25, 15, 4, 5, 678e6, time.UTC)
	n := uint64(0)
	var kv memKV
	s := newKVFeedback(kv.put, false, func() time.Time { return clock }, func() uint64 { n++; return n * 0x1f })
	fb := service.Feedback{Query: "private task text", Used: []string{"find-object", "pick-up-object"}, Outcome: "success"}
	if err := s.Append(context.Background(), fb); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), fb); err != nil {
		t.Fatal(err)
	}
	want := []string{"fb-20261125T150405.678Z-000000000000001f", "fb-20261125T150405.678Z-000000000000003e"}
	if strings.Join(kv.keys, " ") != strings.Join(want, " ") {
		t.Fatalf("keys %q, want %q", kv.keys, want)
	}
	if got := kv.vals[want[0]]; got != `{"id":"`+want[0]+`","skills":["find-object","pick-up-object"],"outcome":"success"}`+"\n" {
		t.Errorf("value %s (the query must not be stored without the opt-in)", got)
	}

	// With the opt-in the query is the trace's task; real keys are time-sortable and random.
	var kv2 memKV
	s2 := newKVFeedback(kv2.put, true, nil, nil)
	for range 2 {
		if err := s2.Append(context.Background(), fb); err != nil {
			t.Fatal(err)
		}
	}
	if len(kv2.keys) != 2 || kv2.keys[0] == kv2.keys[1] || !keyPattern.MatchString(kv2.keys[0]) || kv2.keys[0][:22] > kv2.keys[1][:22] {
		t.Errorf("keys %q: want two distinct fb-<time>-<hex> keys in time order", kv2.keys)
	}
	if v := kv2.vals[kv2.keys[0]]; !strings.HasSuffix(v, `,"task":"private task text"}`+"\n") {
		t.Errorf("value %s: want the task with the opt-in", v)
	}

	// A failing namespace is an error naming the binding.
	bad := newKVFeedback((&memKV{err: errors.New("KV PUT failed: 500")}).put, false, nil, nil)
	if err := bad.Append(context.Background(), fb); err == nil || err.Error() != "worker: feedback: KV namespace CASKG_FEEDBACK: KV PUT failed: 500" {
		t.Errorf("Append = %v", err)
	}
}

// The bucket takes feedbackBurst reports at once, then one per 1/feedbackRate s.
func TestKVFeedbackRateLimit(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var kv memKV
	s := newKVFeedback(kv.put, false, func() time.Time { return clock }, nil)
	fb := service.Feedback{Query: "q", Used: []string{"a"}}
	for i := range feedbackBurst {
		if err := s.Append(context.Background(), fb); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
	}
	var rl *service.RateLimitError
	if err := s.Append(context.Background(), fb); !errors.As(err, &rl) || rl.RetryAfter != time.Second/feedbackRate {
		t.Fatalf("report %d = %v, want a rate limit of %v", feedbackBurst, err, time.Second/feedbackRate)
	}
	clock = clock.Add(time.Second / feedbackRate)
	if err := s.Append(context.Background(), fb); err != nil {
		t.Errorf("after %v: %v", time.Second/feedbackRate, err)
	}
	if len(kv.keys) != feedbackBurst+1 {
		t.Errorf("%d reports stored, want %d", len(kv.keys), feedbackBurst+1)
	}
}

// Through the API: a report is stored and answered {"status":"recorded"}; a bad one is not;
// the bucket's refusal is a 429 with Retry-After.
func TestHandlerFeedback(t *testing.T) {
	var kv memKV
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // stopped: the bucket never refills
	tokens, err := service.ParseTokens(FeedbackTokens, "alice alice-0123456789abcdef;bob bob-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(testlib.Sample(t), "", newKVFeedback(kv.put, false, func() time.Time { return clock }, nil), tokens)
	if err != nil {
		t.Fatal(err)
	}
	json := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer alice-0123456789abcdef"}
	ok := apiCase{method: "POST", target: "/v1/feedback", header: json,
		body:   `{"query":"heat some egg","used":["heat-object-in-microwave"],"outcome":"success"}`,
		status: 200, want: `{"status":"recorded"}`}
	w := serveNative(s, ok)
	checkAnswer(t, ok, w.Code, w.Header(), w.Body.Bytes())
	if len(kv.keys) != 1 || !strings.HasPrefix(kv.keys[0], "fb-20260101T000000.000Z-") || !keyPattern.MatchString(kv.keys[0]) ||
		kv.vals[kv.keys[0]] != `{"id":"`+kv.keys[0]+`","skills":["heat-object-in-microwave"],"outcome":"success","source":"token:alice"}`+"\n" {
		t.Errorf("stored %q %q", kv.keys, kv.vals)
	}
	for _, c := range []apiCase{
		{method: "POST", target: "/v1/feedback", header: json, body: `{"query":"q","used":["no-such-skill"]}`,
			status: 400, want: `not skills of this artifact: \"no-such-skill\"`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Authorization": json["Authorization"]}, body: ok.body,
			status: 415, want: `feedback takes application/json`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Content-Type": "application/json"}, body: ok.body,
			status: 401, want: `feedback needs a bearer token`},
		{method: "POST", target: "/v1/feedback", header: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer bob-0123456789abcdeF"},
			body: ok.body, status: 401, want: `not one of this server's feedback tokens`},
	} {
		w := serveNative(s, c)
		checkAnswer(t, c, w.Code, w.Header(), w.Body.Bytes())
	}
	if len(kv.keys) != 1 {
		t.Errorf("refused reports were stored: %q", kv.keys)
	}
	// A worker without tokens takes no report: it is always reached beyond loopback.
	open, err := newServer(testlib.Sample(t), "", newKVFeedback(kv.put, false, func() time.Time { return clock }, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	w = serveNative(open, ok)
	forbidden := ok
	forbidden.status, forbidden.want = http.StatusForbidden, `only with a bearer token`
	checkAnswer(t, forbidden, w.Code, w.Header(), w.Body.Bytes())
	if len(kv.keys) != 1 {
		t.Errorf("refused reports were stored: %q", kv.keys)
	}
	for range feedbackBurst {
		serveNative(s, ok)
	}
	w = serveNative(s, ok)
	limited := ok
	limited.status, limited.want = http.StatusTooManyRequests, `too many feedback reports`
	checkAnswer(t, limited, w.Code, w.Header(), w.Body.Bytes())
	if w.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}
