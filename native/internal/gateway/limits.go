package gateway

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/wasm/service"
)

// rateLimiter is a token bucket per client of the traces it may record: perMinute a minute,
// up to a minute's worth at once. The clients are the tokens file's (and "" for the trusted
// sessions), so the map is bounded by it.
type rateLimiter struct {
	perMinute int // negative: no limit

	mu      sync.Mutex
	buckets map[string]*bucket
	dropped int64
}

type bucket struct {
	tokens  float64
	at      time.Time
	dropped int64 // since the bucket last allowed a trace
}

// allow takes a token of the client's bucket at now. It also returns the traces dropped
// since the last one allowed, when this one is allowed after some were dropped (for the log),
// and whether this is the first dropped in a row.
func (r *rateLimiter) allow(client string, now time.Time) (ok bool, droppedBefore int64, firstDrop bool) {
	if r.perMinute < 0 {
		return true, 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buckets == nil {
		r.buckets = map[string]*bucket{}
	}
	capacity := float64(r.perMinute)
	b := r.buckets[client]
	if b == nil {
		b = &bucket{tokens: capacity, at: now}
		r.buckets[client] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(capacity, b.tokens+el.Minutes()*capacity)
		b.at = now
	}
	if b.tokens < 1 {
		b.dropped++
		r.dropped++
		return false, 0, b.dropped == 1
	}
	b.tokens--
	d := b.dropped
	b.dropped = 0
	return true, d, false
}

func (r *rateLimiter) droppedTotal() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// record hands the learner an ended trace of a session of client ("" trusted), when the
// client is within its trace rate.
func (g *Gateway) record(client string, tr learn.Trace) {
	l := g.opt.Learner
	switch {
	case l == nil:
	case g.mayRecord(client):
		if err := l.Record(tr); err != nil {
			g.logf("gateway: trace %s not recorded: %v", tr.ID, err)
		} else {
			g.metrics.recorded.Inc()
		}
	default:
		// Dropped over the rate: a checkpoint that holds it must not outlive it, or a kill
		// would have the next start record it after all. (Not in this goroutine: the caller
		// holds its tracker's lock, and a checkpoint takes the trackers' locks.)
		go g.dropped(tr.ID)
	}
}

// mayRecord tells whether client ("" trusted) may record one more trace now, and logs when
// a client starts and stops being over its rate.
func (g *Gateway) mayRecord(client string) bool {
	ok, before, first := g.traceRate.allow(client, g.clock.now())
	who := "trusted sessions"
	if client != "" {
		who = "client " + client
	}
	switch {
	case first:
		g.logf("gateway: %s record more than %d traces a minute; dropping traces until the rate falls (--trace-rate)", who, g.opt.TraceRate)
	case ok && before > 0:
		g.logf("gateway: %s: %s dropped over the rate; recording again", who, plural(int(before), "trace"))
	}
	return ok
}

// admitLocked makes room for a new session s under MaxSessions: it ends the session idle longest
// (no request in flight, oldest last request) when the front is full, and refuses s when
// every session is busy. g.mu is held.
func (g *Gateway) admitLocked(s *frontSession) (victim *frontSession, err error) {
	if len(g.sessions) < g.opt.MaxSessions {
		return nil, nil
	}
	for o := range g.sessions {
		if o == s || o.inflight > 0 {
			continue
		}
		if victim == nil || o.last.Before(victim.last) || o.last.Equal(victim.last) && o.seqNo < victim.seqNo {
			victim = o
		}
	}
	if victim == nil {
		return nil, fmt.Errorf("gateway: %d sessions are open and every one has a request in flight (--max-sessions); try again later", len(g.sessions))
	}
	return victim, nil
}

// evict ends a session to make room for another: its trace in flight is recorded, and its
// client finds the session gone (HTTP 404) at its next request, which tells it to start anew.
func (g *Gateway) evict(s *frontSession) {
	who := ""
	if s.client != "" {
		who = " of client " + s.client
	}
	g.logf("gateway: session %s%s ended: the longest idle of %d (--max-sessions)", s.id, who, g.opt.MaxSessions)
	s.end()
	if s.ss != nil {
		go s.ss.Close()
	}
}

// checkAllowedHost refuses, with 403, a request beyond loopback whose Host is not one of
// AllowedHosts. A browser on the LAN sends the page's name as Host; a name rebound to the
// gateway's address is not on the list.
func (g *Gateway) checkAllowedHost(next http.Handler) http.Handler {
	if len(g.opt.AllowedHosts) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && !isLoopbackAddr(local) &&
			!hostAllowed(r.Host, g.opt.AllowedHosts) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not one of --allowed-hosts", service.Echo(r.Host)), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed tells whether the Host header hostport is one of allowed: an entry with a port
// must match host and port, one without matches the host on any port; case does not count.
func hostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	for _, a := range allowed {
		if strings.EqualFold(a, hostport) {
			return true
		}
		if _, _, err := net.SplitHostPort(a); err != nil && strings.EqualFold(strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"), host) {
			return true
		}
	}
	return false
}
