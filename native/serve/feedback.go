package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/caskg/caskg/wasm/service"
)

// Defaults of a FeedbackLog.
const (
	defaultFeedbackMaxBytes = 16 << 20 // the log's size before it is rotated to FILE.1
	defaultFeedbackRate     = 10       // reports a second, sustained
	defaultFeedbackBurst    = 50       // reports at once, after a quiet spell
)

// FeedbackOptions configure a FeedbackLog; zero values take the defaults.
type FeedbackOptions struct {
	MaxBytes  int64            // rotate before a line would take the file over this size
	Rate      float64          // reports a second the token bucket refills
	Burst     int              // the bucket's size
	QueryText bool             // store the report's query as the trace's "task"; off: never written
	Now       func() time.Time // the clock; nil: time.Now (tests inject one)
}

// FeedbackLog is the service.FeedbackStore of caskg serve and caskg mcp --feedback FILE: it appends
// each report to FILE as one trace line of the JSONL builder.ReadTraces reads,
//
//	{"id": "fb-<UTC time>-<n>", "skills": used, "outcome"?: "success"|"failure", "task"?: query, "source"?: reporter}
//
// so `caskg build --traces FILE` can learn from it. "source" is the report's service.Feedback.Source
// ("token:NAME", "loopback", "mcp:stdio"; never a token): the build counts reported runs by
// reporter (builder.MinReporters). "task" is written only with QueryText: task
// text may be private, and the traces need only the skills. Every line is one write(2) of a
// whole line, under a mutex, to a file opened O_APPEND, so lines never interleave, even with
// another process appending. Before a line would take the file over MaxBytes the file is renamed
// to FILE.1 (replacing the last one) and a new FILE started, so the log takes at most about twice
// MaxBytes. A token bucket (Rate a second, Burst at once) bounds how fast reports are taken; a
// refused one is an *service.RateLimitError. The log never touches the served artifact.
type FeedbackLog struct {
	path string
	opt  FeedbackOptions

	mu     sync.Mutex
	f      *os.File
	size   int64
	n      int64 // reports written since start, for ids
	tokens float64
	last   time.Time // when tokens was last refilled
}

// OpenFeedbackLog opens (creating, mode 0600) the log at path for appending.
func OpenFeedbackLog(path string, opt FeedbackOptions) (*FeedbackLog, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = defaultFeedbackMaxBytes
	}
	if opt.Rate <= 0 {
		opt.Rate = defaultFeedbackRate
	}
	if opt.Burst <= 0 {
		opt.Burst = defaultFeedbackBurst
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	l := &FeedbackLog{path: path, opt: opt, tokens: float64(opt.Burst), last: opt.Now()}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *FeedbackLog) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("serve: feedback log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("serve: feedback log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("serve: feedback log %s: not a regular file", l.path)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Path is the log's file.
func (l *FeedbackLog) Path() string { return l.path }

// traceLine is a line of the log; the field names are builder.Trace's, outcome and source are
// read by builder.ReadTraces, and task rides along.
type traceLine struct {
	ID      string   `json:"id"`
	Skills  []string `json:"skills"`
	Outcome string   `json:"outcome,omitempty"`
	Task    string   `json:"task,omitempty"`
	Source  string   `json:"source,omitempty"`
}

// Append writes fb as one line, or refuses it with an *service.RateLimitError when the bucket is
// empty. fb is expected to have passed service.CheckFeedback.
func (l *FeedbackLog) Append(_ context.Context, fb service.Feedback) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("serve: feedback log is closed")
	}
	now := l.opt.Now()
	if err := l.take(now); err != nil {
		return err
	}
	l.n++
	rec := traceLine{ID: "fb-" + now.UTC().Format("20060102T150405.000Z") + "-" + strconv.FormatInt(l.n, 10),
		Skills: fb.Used, Outcome: fb.Outcome, Source: fb.Source}
	if l.opt.QueryText {
		rec.Task = fb.Query
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("serve: feedback log: %w", err)
	}
	line = append(line, '\n')
	if l.size > 0 && l.size+int64(len(line)) > l.opt.MaxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("serve: feedback log: %w", err)
	}
	return nil
}

// take spends a token of the bucket, refilled at Rate a second since the last call.
func (l *FeedbackLog) take(now time.Time) error {
	if dt := now.Sub(l.last); dt > 0 {
		l.tokens = min(float64(l.opt.Burst), l.tokens+dt.Seconds()*l.opt.Rate)
		l.last = now
	}
	if l.tokens < 1 {
		wait := time.Duration((1 - l.tokens) / l.opt.Rate * float64(time.Second))
		return &service.RateLimitError{RetryAfter: wait}
	}
	l.tokens--
	return nil
}

// rotate renames the file to path.1, replacing the previous one, and starts a new file.
func (l *FeedbackLog) rotate() error {
	if err := l.f.Close(); err != nil {
		l.f = nil
		return fmt.Errorf("serve: feedback log: %w", err)
	}
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		// Keep appending to the old file rather than lose reports.
		if oerr := l.open(); oerr != nil {
			return errors.Join(fmt.Errorf("serve: feedback log: rotate: %w", err), oerr)
		}
		return fmt.Errorf("serve: feedback log: rotate: %w", err)
	}
	return l.open()
}

// Close closes the file; later Appends fail.
func (l *FeedbackLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
