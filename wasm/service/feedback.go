package service

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Feedback is one report that an agent used skills for a task: the body of POST /v1/feedback
// and the arguments of the MCP tool report_skill_use. CheckFeedback holds it to the rules.
type Feedback struct {
	Query   string   // the task the skills were retrieved for; required
	Used    []string // the skills used, in the order they ran; names of the live artifact
	Outcome string   // OutcomeSuccess, OutcomeFailure, or "" when the caller does not say
	// Source names the reporter (FeedbackAuth.Check): set by the host from who sent the report,
	// never read from its body. A store writes it as the trace's "source".
	Source string
}

// The values of Feedback.Outcome besides "".
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// FeedbackStore keeps feedback a host accepted. The API only validates a report and hands it
// over; where it goes (a file for caskg serve, a Workers KV namespace on the worker) is the host's. Append
// may be called concurrently. A store that refuses for load returns a *RateLimitError, which
// the API answers with 429 and Retry-After; any other error is a 500.
type FeedbackStore interface {
	Append(ctx context.Context, fb Feedback) error
}

// MemoryFeedback is a FeedbackStore that keeps reports in memory, or refuses every one with Err:
// for hosts that hand reports on themselves, and for tests.
type MemoryFeedback struct {
	mu      sync.Mutex
	reports []Feedback
	Err     error
}

// Append keeps fb, or returns Err.
func (m *MemoryFeedback) Append(_ context.Context, fb Feedback) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return m.Err
	}
	m.reports = append(m.reports, fb)
	return nil
}

// Reports returns the reports kept so far, in order.
func (m *MemoryFeedback) Reports() []Feedback {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Feedback(nil), m.reports...)
}

// RateLimitError is a FeedbackStore's refusal of a report for coming too soon after others.
type RateLimitError struct {
	RetryAfter time.Duration // when a report would next be taken
}

func (e *RateLimitError) Error() string {
	return "too many feedback reports; retry in " + strconv.Itoa(e.Seconds()) + "s"
}

// Seconds is RetryAfter in whole seconds, rounded up, at least 1 (Retry-After's unit).
func (e *RateLimitError) Seconds() int {
	return max(1, int((e.RetryAfter+time.Second-1)/time.Second))
}

// maxUnknownNamed is how many unknown skill names an error repeats.
const maxUnknownNamed = 3

// maxEcho is the most runes of a caller's name an error repeats.
const maxEcho = 40

// CheckFeedback holds fb to the rules, naming the first field that breaks one (query, then
// used, then outcome): a query of 1 to MaxQueryBytes bytes, 1 to MaxUsed names in used, each
// one that isSkill knows, and an outcome of "", "success" or "failure". Unknown names are
// listed, at most a few and each cut to a short prefix, so the error never repeats a whole
// client value.
func CheckFeedback(fb Feedback, isSkill func(name string) bool) error {
	switch {
	case strings.TrimSpace(fb.Query) == "":
		return errors.New(`service: field "query": empty; give the task the skills were retrieved for`)
	case len(fb.Query) > MaxQueryBytes:
		return errors.New(`service: field "query": ` + strconv.Itoa(len(fb.Query)) + " bytes, at most " + strconv.Itoa(MaxQueryBytes))
	case len(fb.Used) == 0:
		return errors.New(`service: field "used": empty; name the skills used, as retrieve gave them`)
	case len(fb.Used) > MaxUsed:
		return errors.New(`service: field "used": ` + strconv.Itoa(len(fb.Used)) + " names, at most " + strconv.Itoa(MaxUsed))
	}
	var unknown []string
	n := 0
	for _, name := range fb.Used {
		if isSkill(name) {
			continue
		}
		if n++; len(unknown) < maxUnknownNamed {
			unknown = append(unknown, strconv.Quote(Echo(name)))
		}
	}
	if n > 0 {
		msg := `service: field "used": not skills of this artifact: ` + strings.Join(unknown, ", ")
		if n > len(unknown) {
			msg += " and " + strconv.Itoa(n-len(unknown)) + " more"
		}
		return errors.New(msg)
	}
	switch fb.Outcome {
	case "", OutcomeSuccess, OutcomeFailure:
		return nil
	}
	return errors.New(`service: field "outcome": ` + strconv.Quote(Echo(fb.Outcome)) + ` is not "success" or "failure"`)
}

// Echo is s cut to maxEcho runes, with "…" when cut.
func Echo(s string) string {
	if utf8.RuneCountInString(s) <= maxEcho {
		return s
	}
	n := 0
	for i := range s {
		if n == maxEcho {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
