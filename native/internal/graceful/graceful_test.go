package graceful

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// server serves h on 127.0.0.1 with Serve and the given bound. stop cancels its context and
// returns what Serve returned.
type server struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, h http.Handler, timeout time.Duration) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}, ln, timeout) }()
	t.Cleanup(cancel)
	return s
}

func (s *server) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	return s.wait(t)
}

func (s *server) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return within a minute")
		return nil
	}
}

// get asks for / on a connection of its own and returns the body.
func get(addr string) (string, error) {
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

// TestServeClosesFreshConnections: a connection that has sent nothing does not hold the
// shutdown. http.Server.Shutdown alone waits for it until it is 5 seconds old, so with a bound
// of 2 seconds it would fail.
func TestServeClosesFreshConnections(t *testing.T) {
	s := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), 2*time.Second)
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server accepts in order: once a later connection is answered, it holds this one.
	if _, err := get(s.addr); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the fresh connection is still open: read %d bytes, %v", n, err)
	}
}

// TestServeShutdown: a request in flight when the shutdown starts is answered within the
// bound, and one that outlives it is reported.
func TestServeShutdown(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		finish  bool // the handler returns once the shutdown has started
		wantErr string
	}{
		{"answered", time.Minute, true, ""},
		{"past the bound", 200 * time.Millisecond, false, "graceful: requests still open after 200ms; closed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			s := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				<-release
				io.WriteString(w, "late")
			}), tt.timeout)
			body := make(chan string, 1)
			go func() {
				b, err := get(s.addr)
				if err != nil {
					b = err.Error()
				}
				body <- b
			}()
			<-entered
			s.cancel()
			if tt.finish {
				// The shutdown has started once the listener refuses connections.
				for i := 0; ; i++ {
					c, err := net.Dial("tcp", s.addr)
					if err != nil {
						break
					}
					c.Close()
					if i == 1000 {
						t.Fatal("the listener still accepts after 1,000 tries")
					}
					time.Sleep(time.Millisecond)
				}
				close(release)
			}
			err := s.wait(t)
			if !tt.finish {
				close(release)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Serve: %v, want %q", err, tt.wantErr)
			}
			if b := <-body; tt.finish && b != "late" {
				t.Errorf("the request in flight got %q", b)
			}
		})
	}
}
