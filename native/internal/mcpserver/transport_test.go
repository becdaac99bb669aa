package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

// rawSession runs a server over a Transport on pipes and talks to it in raw lines.
type rawSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func startRaw(t *testing.T, opt mcpserver.Options, tr mcptransport.Transport) *rawSession {
	t.Helper()
	srv, err := mcpserver.New(sample(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr.Reader, tr.Writer = inR, outW
	s := &rawSession{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	go func() {
		err := srv.Run(ctx, &tr)
		outW.CloseWithError(io.EOF)
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return s
}

// send writes raw bytes to the server; the pipe blocks until the server reads them.
func (s *rawSession) send(text string) {
	s.t.Helper()
	go s.in.Write([]byte(text)) // the server may answer before it reads all of it
}

// recv reads one reply line.
func (s *rawSession) recv() string {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("no reply: %v", s.out.Err())
	}
	return s.out.Text()
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// TestTransportMalformedLines sends each broken line after a session starts: the exact
// JSON-RPC error comes back, and a ping after it is still answered.
func TestTransportMalformedLines(t *testing.T) {
	long := strings.Repeat("y", 200)
	tests := []struct {
		name, in, want string
	}{
		{"not json", "not json",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON (invalid character 'o' in literal null (expecting 'u'))"}}`},
		{"not UTF-8", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"` + "\xff" + `"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid UTF-8 at byte 55"}}`},
		{"cut short", `{"jsonrpc":"2.0","id":3,"method":"ping"`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON (unexpected end of JSON input)"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported; send one JSON-RPC message per line"}}`},
		{"empty batch", `[]`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported; send one JSON-RPC message per line"}}`},
		{"a number", `42`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object, not a number"}}`},
		{"a string", `"` + long + `"`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object, not a string"}}`},
		{"no jsonrpc", `{"id":3,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: field \"jsonrpc\" is missing; it must be \"2.0\""}}`},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"a","method":"ping"}`,
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: field \"jsonrpc\": must be \"2.0\""}}`},
		{"no method", `{"jsonrpc":"2.0","id":3}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: field \"method\" is missing"}}`},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":7}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: field \"method\": must be a non-empty string"}}`},
		{"params an array", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: field \"params\": must be an object, not an array"}}`},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: field \"id\": must be a string or an integer, not an object"}}`},
		{"id fractional", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: field \"id\": a number must be an integer (64 bits)"}}`},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a response needs the id of the request it answers"}}`},
		{"too long", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"` + strings.Repeat("z", 5000) + `"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is longer than 4096 bytes"}}`},
		// Errors of the SDK are reworded: no Go types, values cut short.
		{"params of the wrong type", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: field \"name\" has the wrong type"}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"` + long + `"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"` + long[:40] + `…\""}}`},
		{"unknown tool", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + long + `"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool \"` + long[:40] + `…\""}}`},
	}
	s := startRaw(t, mcpserver.Options{}, mcptransport.Transport{MaxLineBytes: 4096})
	s.send(initLine)
	s.recv()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			s.send("\n \r\n" + tt.in + "\n")
			if got := s.recv(); got != tt.want {
				t.Errorf("%s\ngot  %s\nwant %s", tt.in, got, tt.want)
			}
			s.send(`{"jsonrpc":"2.0","id":"p` + itoa(i) + `","method":"ping"}` + "\n")
			if got, want := s.recv(), `{"jsonrpc":"2.0","id":"p`+itoa(i)+`","result":{}}`; got != want {
				t.Errorf("ping after it: %s, want %s", got, want)
			}
		})
	}
}

// TestTransportParseErrorFirst: a line that is not JSON before initialize gets -32700, and
// the initialize after it its result.
func TestTransportParseErrorFirst(t *testing.T) {
	s := startRaw(t, mcpserver.Options{}, mcptransport.Transport{})
	s.send("not json\n" + initLine)
	if got, want := s.recv(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON (invalid character 'o' in literal null (expecting 'u'))"}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := s.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":{"capabilities"`) {
		t.Errorf("initialize after a parse error: %s", got)
	}
}

// TestTransportRepliesBeforeEOF sends requests and closes the input at once, with the last
// line unterminated: every reply is written before Run returns, which it does without error.
func TestTransportRepliesBeforeEOF(t *testing.T) {
	s := startRaw(t, mcpserver.Options{}, mcptransport.Transport{})
	const n = 5
	var b strings.Builder
	b.WriteString(initLine)
	for i := range n {
		b.WriteString(`{"jsonrpc":"2.0","id":` + itoa(10+i) + `,"method":"tools/call","params":{"name":"retrieve_skills","arguments":{"query":"heat an egg"}}}`)
		if i < n-1 {
			b.WriteString("\n")
		}
	}
	go func() {
		s.in.Write([]byte(b.String()))
		s.in.Close()
	}()
	got := map[string]bool{}
	for s.out.Scan() {
		var r struct {
			ID     json.RawMessage
			Result *struct{ IsError bool }
		}
		if err := json.Unmarshal(s.out.Bytes(), &r); err != nil || r.Result == nil || r.Result.IsError {
			t.Errorf("reply %.200s: %v", s.out.Text(), err)
		}
		got[string(r.ID)] = true
	}
	for i := range n {
		if !got[itoa(10+i)] {
			t.Errorf("no reply to request %d before exit; got %v", 10+i, got)
		}
	}
	if err := <-s.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
