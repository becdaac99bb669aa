// Package graceful serves an http.Server until a context ends, then shuts it down within a
// bound: requests in flight finish, and connections whose first request has not arrived are
// closed at once.
//
// http.Server.Shutdown counts a connection whose first request header it has not read yet
// (http.StateNew) as busy until it is 5 seconds old: a client that opened a connection ahead of its next request (a
// pool's spare, a browser's preconnect) would hold every shutdown for 5 seconds, and one with a
// bound of 5 seconds would fail.
package graceful

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve serves hs on ln until ctx ends, then shuts hs down: it stops accepting, closes the
// connections whose first request has not arrived (one arriving then is cut, as the server is
// going), runs hs's RegisterOnShutdown functions, and waits up to
// timeout for the requests in flight before closing what is left, which it reports as an error.
// It returns nil after a clean shutdown, and Serve's error if serving stops by itself.
func Serve(ctx context.Context, hs *http.Server, ln net.Listener, timeout time.Duration) error {
	fresh := trackFresh(hs)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("graceful: serve http: %w", err)
	case <-ctx.Done():
	}
	// Shutdown closes the listeners before it runs the functions registered with
	// RegisterOnShutdown, so no connection joins the fresh ones once they are closed.
	hs.RegisterOnShutdown(fresh.closeAll)
	shut, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := hs.Shutdown(shut)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.Join(fmt.Errorf("graceful: requests still open after %v; closed", timeout), hs.Close())
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// freshConns holds the connections of a server whose first request has not arrived.
type freshConns struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

// trackFresh makes hs keep its fresh connections in the returned set, calling hs's own
// ConnState hook as before.
func trackFresh(hs *http.Server) *freshConns {
	f := &freshConns{m: map[net.Conn]struct{}{}}
	prev := hs.ConnState
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		f.mu.Lock()
		if s == http.StateNew {
			f.m[c] = struct{}{}
		} else {
			delete(f.m, c)
		}
		f.mu.Unlock()
		if prev != nil {
			prev(c, s)
		}
	}
	return f
}

// closeAll closes every fresh connection: none has a request being served.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.m {
		c.Close()
		delete(f.m, c)
	}
}
