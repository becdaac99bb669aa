package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessageBytes bounds a line a stdio server writes. It is the SDK's own frame limit, so a
// message that passed before passes now; what changed is what happens beyond it. The SDK ends
// the connection on a longer frame ("not JSON-RPC"), which kills every call in flight on the
// server and restarts it; the gateway cuts the line off instead and, when it was the answer to
// a call, answers that call with an error, and the connection stays up.
const maxMessageBytes = mcp.DefaultMaxLineLength

// commandTransport runs a stdio server as mcp.CommandTransport does (its stdin closed to stop
// it, then SIGTERM, then SIGKILL), with its stdout read through a lineLimiter.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	maxLine   int
	logf      func(format string, a ...any)
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &lineLimiter{r: bufio.NewReaderSize(stdout, 64<<10), max: t.maxLine, logf: t.logf}
	// The SDK's frame limit stays above the limiter's, which passes nothing longer.
	return (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: &childStdin{t.cmd, stdin, t.terminate},
		MaxLineLength: t.maxLine + 1<<10}).Connect(ctx)
}

// childStdin is the server's stdin; closing it stops the server as the MCP specification
// says: close its input, wait, SIGTERM, wait, SIGKILL.
type childStdin struct {
	cmd       *exec.Cmd
	w         io.WriteCloser
	terminate time.Duration
}

func (c *childStdin) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *childStdin) Close() error {
	if err := c.w.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(c.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server does not exit")
}

// lineLimiter passes a server's output a line at a time, holding at most max bytes of one. A
// longer line is read to its end and dropped; in its place goes, when the line was a response
// (it has an "id" and a "result" or "error" at its top level), an error response with that id,
// so that the call waiting for it fails alone.
type lineLimiter struct {
	r    *bufio.Reader
	max  int
	logf func(format string, a ...any)

	line []byte // the line being passed
	off  int    // how much of it Read has given
	err  error  // after line
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for l.off == len(l.line) {
		if l.err != nil {
			return 0, l.err
		}
		l.line, l.off, l.err = l.next(l.line[:0])
	}
	n := copy(p, l.line[l.off:])
	l.off += n
	return n, nil
}

// next reads the next line into buf (or its replacement), with the error that ended the
// input after it.
func (l *lineLimiter) next(buf []byte) ([]byte, int, error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(buf)+len(chunk) > l.max {
			return l.drop(buf, chunk, err)
		}
		buf = append(buf, chunk...)
		if err != bufio.ErrBufferFull {
			return buf, 0, err
		}
	}
}

// drop reads the rest of an overlong line, whose start is head and chunk, and returns its
// replacement.
func (l *lineLimiter) drop(head, chunk []byte, err error) ([]byte, int, error) {
	var sc topScan
	sc.feed(head)
	sc.feed(chunk)
	n := len(head) + len(chunk)
	for err == bufio.ErrBufferFull {
		chunk, err = l.r.ReadSlice('\n')
		sc.feed(chunk)
		n += len(chunk)
	}
	reply := sc.reply(n, l.max)
	if l.logf != nil {
		what := "a message"
		if reply != nil {
			what = "the answer to request " + string(sc.id)
		}
		l.logf("wrote %s of %d bytes, more than the gateway reads (%d); dropped", what, n, l.max)
	}
	return append(head[:0], reply...), 0, err
}

// topScan follows a JSON object's bytes as they come, keeping what its top level says: its keys
// of interest and the raw value of "id". It reads any bytes without failing; on input that is
// not JSON it keeps what it saw, and reply then gives nothing unless it saw a usable id.
type topScan struct {
	depth      int
	inStr, esc bool
	expectKey  bool   // at depth 1, the next string is a key
	inKey      bool   // reading a key at depth 1
	key        []byte // the key being read, cut at maxKey
	lastKey    string
	inID       bool // reading the value of "id"
	id         []byte
	idBad      bool // the id value is not a string or number, or is too long
	hasResult  bool
	hasError   bool
	hasMethod  bool
}

const (
	maxKey = 16
	maxID  = 256
)

func (s *topScan) feed(b []byte) {
	for _, c := range b {
		s.byte(c)
	}
}

func (s *topScan) byte(c byte) {
	if s.inStr {
		if s.inID {
			s.idByte(c)
		}
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			if s.inKey {
				s.inKey = false
				s.lastKey = string(s.key)
				switch s.lastKey {
				case "result":
					s.hasResult = true
				case "error":
					s.hasError = true
				case "method":
					s.hasMethod = true
				}
			}
			return
		}
		if s.inKey && len(s.key) <= maxKey {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case ' ', '\t', '\r', '\n':
		if s.inID && s.depth == 1 && len(s.id) > 0 {
			s.inID = false // white space ends a number: "0. 0" is not the id 0.0
		}
		return
	case '"':
		s.inStr = true
		if s.depth == 1 && s.expectKey {
			s.inKey, s.key = true, s.key[:0]
			s.expectKey = false
			return
		}
	case '{', '[':
		s.depth++
		if s.depth == 1 && c == '{' {
			s.expectKey = true
		}
		if s.inID {
			s.idBad = true
		}
	case '}', ']':
		s.depth--
		if s.depth <= 0 {
			s.inID = false
		}
		return
	case ':':
		if s.depth == 1 {
			if s.lastKey == "id" {
				s.inID, s.id, s.idBad = true, s.id[:0], false
			}
			return
		}
	case ',':
		if s.depth == 1 {
			s.expectKey, s.inID, s.lastKey = true, false, ""
			return
		}
	}
	if s.inID && s.depth == 1 {
		s.idByte(c)
	}
}

func (s *topScan) idByte(c byte) {
	if len(s.id) >= maxID {
		s.idBad = true
		return
	}
	s.id = append(s.id, c)
}

// reply is the error response that stands for a dropped response of n bytes, or nil when the
// line was not a response with a usable id (a request or notification of the server, or
// garbage): nothing waits for it.
func (s *topScan) reply(n, limit int) []byte {
	if s.idBad || len(s.id) == 0 || s.hasMethod || !s.hasResult && !s.hasError || !json.Valid(s.id) {
		return nil
	}
	if c := s.id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil
	}
	msg := fmt.Sprintf("the result is %d bytes, more than the gateway reads (%d); the server is still connected", n, limit)
	// The id goes back as the server wrote it: Marshal would escape its <, > and & for HTML.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(s.id),
		"error": map[string]any{"code": -32603, "message": msg}})
	return b.Bytes() // Encode ends it with a newline
}
