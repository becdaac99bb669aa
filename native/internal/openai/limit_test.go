package openai

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLimiterSpacing(t *testing.T) {
	now := time.Unix(1000, 0)
	var slept []time.Duration
	l := newLimiter(100 * time.Millisecond)
	l.now = func() time.Time { return now }
	l.sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	ctx := context.Background()
	for range 3 { // three callers at the same instant queue up
		l.wait(ctx)
	}
	now = now.Add(250 * time.Millisecond) // the third slot (200ms) has passed by 50ms
	l.wait(ctx)
	now = now.Add(10 * time.Millisecond)
	l.wait(ctx)
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 50 * time.Millisecond, 140 * time.Millisecond}
	if diff := cmp.Diff(want, slept); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}
