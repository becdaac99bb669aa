package mcptransport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/service"
)

// Defaults of a Transport.
const (
	defaultMaxLineBytes = 16 << 20         // of one JSON-RPC message, as the SDK's stdio transport
	defaultDrainTimeout = 10 * time.Second // for replies still owed when the input ends
)

// Transport is an MCP transport over newline-delimited JSON-RPC 2.0 on a reader and a writer
// (stdin and stdout for `caskg mcp`) that survives any byte stream. The SDK's own stdio
// transport ends the session on the first line it cannot decode; this one checks every line
// and answers a broken one itself, as JSON-RPC 2.0 says, then reads the next:
//
//   - not JSON, or not valid UTF-8: -32700 parse error, id null;
//   - a batch (an array): -32600, batches are not supported (MCP removed them);
//   - not an object, no "jsonrpc": "2.0", an id that is not a string or a number, a request
//     without a string "method", "params" that are not an object, a line longer than
//     MaxLineBytes: -32600 invalid request, with the id when the line had a usable one.
//
// Blank lines are skipped. When the input ends, Read holds the end back until every request it
// passed on has had its reply written, or DrainTimeout has passed, so that a client which sends
// a request and closes its end still gets the answer.
//
// Every message goes out as one Write of one whole line under one lock: replies from the SDK
// and the transport's own errors never interleave.
type Transport struct {
	Reader       io.Reader // closed with the connection when it is an io.Closer
	Writer       io.Writer
	MaxLineBytes int           // 0 means defaultMaxLineBytes
	DrainTimeout time.Duration // 0 means defaultDrainTimeout
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &conn{
		t:       *t,
		lines:   make(chan lineOrErr),
		closed:  make(chan struct{}),
		pending: map[jsonrpc.ID]bool{},
	}
	if c.t.MaxLineBytes <= 0 {
		c.t.MaxLineBytes = defaultMaxLineBytes
	}
	if c.t.DrainTimeout <= 0 {
		c.t.DrainTimeout = defaultDrainTimeout
	}
	go c.readLines()
	return c, nil
}

// errUnanswered means the input ended while requests were still being handled, and they were
// not answered within the drain timeout.
var errUnanswered = errors.New("mcptransport: input ended with requests unanswered")

type lineOrErr struct {
	line    []byte
	tooLong bool
	err     error
}

// conn is a Transport's mcp.Connection.
type conn struct {
	t Transport

	lines  chan lineOrErr // from readLines
	closed chan struct{}
	once   sync.Once

	writeMu sync.Mutex // one whole line at a time on t.Writer

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // requests passed on and not yet answered
	drained chan struct{}       // closed when pending empties, while Read waits for it
}

// readLines reads lines into c.lines until the input ends or the connection closes. The rest
// of a line longer than MaxLineBytes is read and dropped, so memory stays bounded.
func (c *conn) readLines() {
	r := bufio.NewReaderSize(c.t.Reader, 64<<10)
	send := func(l lineOrErr) bool {
		select {
		case c.lines <- l:
			return true
		case <-c.closed:
			return false
		}
	}
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var frag []byte
			frag, err = r.ReadSlice('\n')
			if len(line)+len(frag) > c.t.MaxLineBytes {
				tooLong, line = true, nil
			}
			if !tooLong {
				line = append(line, frag...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if (tooLong || len(bytes.TrimSpace(line)) > 0) && !send(lineOrErr{line: line, tooLong: tooLong}) {
			return
		}
		if err != nil {
			send(lineOrErr{err: err})
			return
		}
	}
}

// Read implements mcp.Connection: the next well-formed message, answering broken lines on the
// way.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			if err := c.drain(ctx); err != nil {
				return nil, err
			}
			return nil, l.err
		}
		msg, id, rpcErr := checkLine(l.line, l.tooLong, c.t.MaxLineBytes)
		if rpcErr != nil {
			if err := c.writeError(ctx, id, rpcErr); err != nil {
				return nil, err
			}
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			dup := c.pending[req.ID]
			c.pending[req.ID] = true
			c.mu.Unlock()
			if dup {
				// The SDK would drop it without a word; say why.
				if err := c.writeError(ctx, id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
					Message: "invalid request: the id is in use by a request still being answered"}); err != nil {
					return nil, err
				}
				continue
			}
		}
		return msg, nil
	}
}

// drain waits until every request passed on has been answered, the drain timeout passes, ctx
// ends or the connection closes.
func (c *conn) drain(ctx context.Context) error {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.drained = make(chan struct{})
	drained := c.drained
	c.mu.Unlock()
	timer := time.NewTimer(c.t.DrainTimeout)
	defer timer.Stop()
	select {
	case <-drained:
		return nil
	case <-timer.C:
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		return fmt.Errorf("%w: %d still open after %v", errUnanswered, n, c.t.DrainTimeout)
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return io.EOF
	}
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		resp.Error = plainError(resp.Error)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		if len(c.pending) == 0 && c.drained != nil {
			close(c.drained)
			c.drained = nil
		}
		c.mu.Unlock()
	}
	return nil
}

// writeError answers a broken line with id (JSON null when nil).
func (c *conn) writeError(ctx context.Context, id json.RawMessage, e *jsonrpc.Error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *conn) writeLine(data []byte) error {
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.t.Writer.Write(line)
	return err
}

// Close implements mcp.Connection. It closes the reader when it is an io.Closer, to stop
// readLines, but never the writer: stdout outlives the session.
func (c *conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if rc, ok := c.t.Reader.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *conn) SessionID() string { return "" }

// checkLine decodes one line. A line that is not a well-formed JSON-RPC 2.0 message gives the
// error to answer it with, and the id to answer it under when the line had a usable one.
func checkLine(line []byte, tooLong bool, maxBytes int) (jsonrpc.Message, json.RawMessage, *jsonrpc.Error) {
	invalid := func(format string, args ...any) *jsonrpc.Error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	if tooLong {
		return nil, nil, invalid("the message is longer than %d bytes", maxBytes)
	}
	// JSON text is UTF-8 (RFC 8259), and a decoder that reads a bad byte as U+FFFD would pass
	// on a message the client never wrote: a parse error, as the HTTP side answers.
	if i := jsontext.InvalidUTF8(line); i >= 0 {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the line is not valid UTF-8 at byte " + strconv.Itoa(i)}
	}
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		msg := "parse error: the line is not JSON"
		var se *json.SyntaxError
		if err := json.Unmarshal(line, new(json.RawMessage)); errors.As(err, &se) {
			msg += " (" + se.Error() + ")"
		}
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: msg}
	}
	switch line[0] {
	case '[':
		return nil, nil, invalid("batches are not supported; send one JSON-RPC message per line")
	case '{':
	default:
		return nil, nil, invalid("a message must be a JSON object, not %s", jsontext.Kind(line))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, nil, invalid("a message must be a JSON object")
	}
	id, hasID := fields["id"]
	if hasID {
		switch jsontext.Kind(id) {
		case "a string", "null":
		case "a number":
			if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
				return nil, nil, invalid(`field "id": a number must be an integer (64 bits)`)
			}
		default:
			return nil, nil, invalid(`field "id": must be a string or an integer, not %s`, jsontext.Kind(id))
		}
	}
	replyID := id
	if !hasID {
		replyID = nil
	}
	v, ok := fields["jsonrpc"]
	if !ok {
		return nil, replyID, invalid(`field "jsonrpc" is missing; it must be "2.0"`)
	}
	if string(v) != `"2.0"` {
		return nil, replyID, invalid(`field "jsonrpc": must be "2.0"`)
	}
	method, isRequest := fields["method"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	switch {
	case isRequest:
		var m string
		if jsontext.Kind(method) != "a string" || json.Unmarshal(method, &m) != nil || m == "" {
			return nil, replyID, invalid(`field "method": must be a non-empty string`)
		}
		if p, ok := fields["params"]; ok && jsontext.Kind(p) != "an object" && jsontext.Kind(p) != "null" {
			return nil, replyID, invalid(`field "params": must be an object, not %s`, jsontext.Kind(p))
		}
	case hasResult || hasError:
		if !hasID || jsontext.Kind(id) == "null" {
			return nil, nil, invalid(`a response needs the id of the request it answers`)
		}
	default:
		return nil, replyID, invalid(`field "method" is missing`)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, replyID, invalid("not a JSON-RPC 2.0 message")
	}
	return msg, replyID, nil
}

// goField finds the field a Go decoding error is about: "… Go struct field T.name of type …".
var goField = regexp.MustCompile(`Go struct field (?:[\w.]*\.)?(\w+) of type`)

// plainError rewords an error reply of the SDK for a client: a decoding error names the field
// instead of Go types, and a quoted value is cut to a short prefix.
func plainError(err error) error {
	code, data := int64(jsonrpc.CodeInternalError), json.RawMessage(nil)
	if we := (*jsonrpc.Error)(nil); errors.As(err, &we) {
		code, data = we.Code, we.Data
	}
	full := err.Error()
	msg := full
	if strings.Contains(msg, "Go struct field") || strings.Contains(msg, "Go value") || strings.Contains(msg, "cannot unmarshal") {
		msg = "invalid params: a field has the wrong type"
		if m := goField.FindStringSubmatch(full); m != nil {
			msg = fmt.Sprintf("invalid params: field %q has the wrong type", m[1])
		}
	}
	out := &jsonrpc.Error{Code: code, Message: shortQuoted(msg)}
	if len(data) <= 256 {
		out.Data = data
	}
	return out
}

// shortQuoted cuts every Go-quoted string in msg to a short prefix.
func shortQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			break
		}
		q, err := strconv.QuotedPrefix(msg[i:])
		if err != nil {
			b.WriteString(msg[:i+1])
			msg = msg[i+1:]
			continue
		}
		u, _ := strconv.Unquote(q)
		b.WriteString(msg[:i])
		b.WriteString(strconv.Quote(service.Echo(u)))
		msg = msg[i+len(q):]
	}
	b.WriteString(msg)
	return b.String()
}
