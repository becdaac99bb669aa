package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/service"
)

// The worker's environment: the Workers KV namespace that keeps feedback, and the variable that
// lets it keep query text. wrangler.toml and workerd.capnp name them.
const (
	// FeedbackBinding is the KV namespace binding POST /v1/feedback writes to; without it the
	// route answers 501.
	FeedbackBinding = "CASKG_FEEDBACK"
	// FeedbackQueryText, set to "true" or "1", stores a report's query as its trace's "task";
	// otherwise query text is never stored (it may be private, and traces need only skills).
	FeedbackQueryText = "CASKG_FEEDBACK_QUERY_TEXT"
	// FeedbackTokens (service.TokensEnv), a secret, holds the reporters' bearer tokens in
	// service.ParseTokens' format. A worker is always reached beyond loopback: without tokens it
	// takes no report (403).
	FeedbackTokens = service.TokensEnv
)

// The token bucket of a kvFeedback: caskg serve's defaults (native/serve), per isolate.
const (
	feedbackRate  = 10 // reports a second, sustained
	feedbackBurst = 50 // reports at once, after a quiet spell
)

// kvFeedback is the worker's service.FeedbackStore: one Workers KV entry per report. The key is
//
//	fb-<UTC time, 20060102T150405.000Z>-<16 random hex digits>
//
// so a listing (KV lists keys in byte order) runs oldest first and two isolates never write the
// same key; the value is the key's trace line as caskg serve --feedback appends it, the JSONL
// line of `caskg build --traces` with its newline:
//
//	{"id":"<key>","skills":[used…],"outcome":"success"|"failure"?,"task":query?,"source":"token:NAME"}
//
// so that the values of a listing, concatenated, are a traces file. "task" is written only with
// queryText. A token bucket (feedbackRate a second, feedbackBurst at once, per isolate) bounds
// the writes one isolate makes; a refused report is an *service.RateLimitError.
type kvFeedback struct {
	put       func(ctx context.Context, key, value string) error // the namespace's put
	queryText bool
	now       func() time.Time
	random    func() uint64

	mu     sync.Mutex
	tokens float64
	last   time.Time // when tokens was last refilled
}

// newKVFeedback returns a store that writes with put; now and random default to the clock and
// math/rand/v2.
func newKVFeedback(put func(ctx context.Context, key, value string) error, queryText bool, now func() time.Time, random func() uint64) *kvFeedback {
	if now == nil {
		now = time.Now
	}
	if random == nil {
		random = rand.Uint64
	}
	return &kvFeedback{put: put, queryText: queryText, now: now, random: random, tokens: feedbackBurst, last: now()}
}

// Append writes fb as one KV entry, or refuses it when the bucket is empty. fb is expected to
// have passed service.CheckFeedback.
func (s *kvFeedback) Append(ctx context.Context, fb service.Feedback) error {
	now := s.now()
	if err := s.take(now); err != nil {
		return err
	}
	key := "fb-" + now.UTC().Format("20060102T150405.000Z") + "-" + hex16(s.random())
	if err := s.put(ctx, key, string(traceLine(key, fb, s.queryText))); err != nil {
		return errors.New("worker: feedback: KV namespace " + FeedbackBinding + ": " + err.Error())
	}
	return nil
}

// take takes a token from the bucket, refilled for the time since the last report.
func (s *kvFeedback) take(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := now.Sub(s.last); d > 0 {
		s.tokens = min(feedbackBurst, s.tokens+d.Seconds()*feedbackRate)
		s.last = now
	}
	if s.tokens < 1 {
		return &service.RateLimitError{RetryAfter: time.Duration((1 - s.tokens) / feedbackRate * float64(time.Second))}
	}
	s.tokens--
	return nil
}

// traceLine is the report's trace line with its newline, byte for byte what encoding/json writes
// for caskg serve's line (field order id, skills, outcome, task, source; empty ones left out).
func traceLine(id string, fb service.Feedback, queryText bool) []byte {
	b := jsontext.AppendString([]byte(`{"id":`), id)
	b = append(b, `,"skills":[`...)
	for i, name := range fb.Used {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, name)
	}
	b = append(b, ']')
	if fb.Outcome != "" {
		b = jsontext.AppendString(append(b, `,"outcome":`...), fb.Outcome)
	}
	if queryText && fb.Query != "" {
		b = jsontext.AppendString(append(b, `,"task":`...), fb.Query)
	}
	if fb.Source != "" {
		b = jsontext.AppendString(append(b, `,"source":`...), fb.Source)
	}
	return append(b, "}\n"...)
}

// hex16 is x as 16 lower-case hex digits.
func hex16(x uint64) string {
	s := strconv.FormatUint(x, 16)
	return strings.Repeat("0", 16-len(s)) + s
}

// feedbackOff is the 501 of POST /v1/feedback on a worker without a KV namespace bound as
// FeedbackBinding, naming the binding where the API would name caskg serve's flag.
const feedbackOff = "worker: feedback is not configured on this worker: it records no reports " +
	"(bind a Workers KV namespace as " + FeedbackBinding + " to record them)"
