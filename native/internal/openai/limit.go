package openai

import (
	"context"
	"sync"
	"time"
)

// limiter spaces request starts at least interval apart (a token bucket of depth one): an RPM
// limit is honoured over every window, not just on average, so servers that count requests per
// rolling minute never see a burst. Each caller reserves the next free slot under the lock and
// then sleeps until it outside the lock, so waiters are served in arrival order.
type limiter struct {
	interval time.Duration

	mu   sync.Mutex
	next time.Time // earliest start of the next request

	now   func() time.Time                                 // time.Now, replaced in tests
	sleep func(ctx context.Context, d time.Duration) error // sleepCtx, replaced in tests
}

func newLimiter(interval time.Duration) *limiter {
	return &limiter{interval: interval, now: time.Now, sleep: sleepCtx}
}

// wait blocks until the caller's slot, or returns ctx's error (the slot is then wasted).
func (l *limiter) wait(ctx context.Context) error {
	l.mu.Lock()
	now := l.now()
	t := l.next
	if t.Before(now) {
		t = now
	}
	l.next = t.Add(l.interval)
	l.mu.Unlock()
	return l.sleep(ctx, t.Sub(now))
}
