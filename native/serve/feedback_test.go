package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/wasm/service"
)

// clock is a settable time for the rate limit.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func openLog(t *testing.T, opt FeedbackOptions) (*FeedbackLog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	l, err := OpenFeedbackLog(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

// readLines decodes every line of the file at path, failing on a partial line.
func readLines(t *testing.T, path string) []traceLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a whole line: %q", path, b)
	}
	var out []traceLine
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var tl traceLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tl); err != nil {
			t.Fatalf("%s: line %q: %v", path, line, err)
		}
		out = append(out, tl)
	}
	return out
}

func TestFeedbackLogAppend(t *testing.T) {
	c := &clock{time.Date(2026, 11, 25, 14, 20, 32, 123e6, time.UTC)}
	for _, queryText := range []bool{false, true} {
		t.Run(fmt.Sprint("query text ", queryText), func(t *testing.T) {
			l, path := openLog(t, FeedbackOptions{QueryText: queryText, Now: c.now})
			for _, fb := range []service.Feedback{
				{Query: "heat an egg", Used: []string{"pick-up-object", "heat-object"}, Outcome: "success", Source: "token:alice"},
				{Query: "cool a tomato", Used: []string{"cool-object"}},
			} {
				if err := l.Append(context.Background(), fb); err != nil {
					t.Fatal(err)
				}
			}
			want := []traceLine{
				{ID: "fb-20261125T142032.123Z-1", Skills: []string{"pick-up-object", "heat-object"}, Outcome: "success", Source: "token:alice"},
				{ID: "fb-20261125T142032.123Z-2", Skills: []string{"cool-object"}},
			}
			if queryText {
				want[0].Task, want[1].Task = "heat an egg", "cool a tomato"
			}
			if diff := cmp.Diff(want, readLines(t, path)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			// The build reads each line's reporter.
			runs, err := builder.ReadTraces(path)
			if err != nil {
				t.Fatal(err)
			}
			if runs[0].Source != "token:alice" || runs[1].Source != "" {
				t.Errorf("ReadTraces gave sources %q, %q; want token:alice and none", runs[0].Source, runs[1].Source)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600: the file may hold task text", fi.Mode().Perm())
			}
		})
	}
}

func TestFeedbackLogKeepsExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"old","skills":["a"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := OpenFeedbackLog(path, FeedbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(context.Background(), service.Feedback{Query: "q", Used: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	if len(got) != 2 || got[0].ID != "old" || got[1].Skills[0] != "b" {
		t.Errorf("lines %+v, want the old one, then the new", got)
	}
}

func TestFeedbackLogRotation(t *testing.T) {
	c := &clock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	// A line is {"id":"fb-20260102T030405.000Z-N","skills":["s"]} and a newline: 50 bytes for
	// N < 10; two fit in 100 bytes, a third does not.
	l, path := openLog(t, FeedbackOptions{MaxBytes: 100, Now: c.now, Burst: 100})
	ids := func(p string) []string {
		var out []string
		for _, tl := range readLines(t, p) {
			out = append(out, tl.ID[len(tl.ID)-1:])
		}
		return out
	}
	for i := range 7 {
		if err := l.Append(context.Background(), service.Feedback{Query: "q", Used: []string{"s"}}); err != nil {
			t.Fatal(i, err)
		}
	}
	// 1 2 | 3 4 | 5 6 | 7: the file holds 7, FILE.1 5 and 6; 1 to 4 are gone.
	if got, want := ids(path), []string{"7"}; !cmp.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", path, got, want)
	}
	if got, want := ids(path+".1"), []string{"5", "6"}; !cmp.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", path+".1", got, want)
	}
	if _, err := os.Stat(path + ".2"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s.2 exists: one old file only", path)
	}
	// A line longer than the limit still goes into a file of its own.
	long := service.Feedback{Query: "q", Used: []string{strings.Repeat("x", 200)}}
	if err := l.Append(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, path); len(got) != 1 || got[0].Skills[0] != long.Used[0] {
		t.Errorf("the long line is not alone in the new file: %+v", got)
	}
}

// Concurrent appends, with rotation under way, leave only whole lines, each report exactly once.
func TestFeedbackLogConcurrent(t *testing.T) {
	const workers, each = 8, 50
	l, path := openLog(t, FeedbackOptions{MaxBytes: 4 << 10, Burst: workers * each})
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				errs <- l.Append(context.Background(), service.Feedback{Query: "q", Used: []string{name, strings.Repeat("y", i)}})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The file and FILE.1 hold the last reports; none is torn, none twice.
	seen := map[string]bool{}
	for _, p := range []string{path + ".1", path} {
		for _, tl := range readLines(t, p) {
			if len(tl.Skills) != 2 || seen[tl.Skills[0]] {
				t.Fatalf("%s: bad or repeated line %+v", p, tl)
			}
			seen[tl.Skills[0]] = true
		}
	}
	if len(seen) == 0 {
		t.Fatal("no lines")
	}
}

func TestFeedbackLogRateLimit(t *testing.T) {
	c := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, path := openLog(t, FeedbackOptions{Rate: 10, Burst: 3, Now: c.now})
	fb := service.Feedback{Query: "q", Used: []string{"s"}}
	try := func() error { return l.Append(context.Background(), fb) }
	for i := range 3 {
		if err := try(); err != nil {
			t.Fatalf("report %d of the burst: %v", i+1, err)
		}
	}
	err := try()
	var rl *service.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 100*time.Millisecond {
		t.Fatalf("4th report at once: %v, want a rate limit error with RetryAfter 100ms", err)
	}
	c.t = c.t.Add(50 * time.Millisecond) // half a token
	if err := try(); !errors.As(err, &rl) || rl.RetryAfter != 50*time.Millisecond {
		t.Fatalf("after 50ms: %v, want RetryAfter 50ms", err)
	}
	c.t = c.t.Add(50 * time.Millisecond)
	if err := try(); err != nil {
		t.Fatalf("after 100ms: %v, want one more taken", err)
	}
	if err := try(); err == nil {
		t.Fatal("the bucket refilled beyond its rate")
	}
	c.t = c.t.Add(time.Hour) // refills to the burst, no more
	for i := range 3 {
		if err := try(); err != nil {
			t.Fatalf("after an hour, report %d: %v", i+1, err)
		}
	}
	if err := try(); err == nil {
		t.Fatal("the bucket held more than its burst")
	}
	if got := len(readLines(t, path)); got != 7 {
		t.Errorf("%d lines written, want 7: a refused report writes nothing", got)
	}
}

func TestFeedbackLogClosed(t *testing.T) {
	l, _ := openLog(t, FeedbackOptions{})
	l.Close()
	if err := l.Append(context.Background(), service.Feedback{Query: "q", Used: []string{"s"}}); err == nil {
		t.Error("Append after Close succeeded")
	}
}
