package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
)

// TestOversizeResultKeepsServer: a result over the frame limit fails its call, and the server
// connection stays up: the same process answers the next call. (The SDK's own reader ended the
// connection as "not JSON-RPC" and restarted the server.)
func TestOversizeResultKeepsServer(t *testing.T) {
	srv := stdioServer(t, "child", "big")
	// Writing and reading 20 MB under the race detector on a loaded machine takes seconds: the
	// call must fail for its size, not for the test servers' 5 s timeout.
	srv.Timeout = time.Minute
	cfg := &Config{Servers: []ServerConfig{srv}}
	g := startGateway(t, cfg, Options{})
	fc := connect(t, g)
	pid := testlib.ToolText(fc.callTool(t, "child__pid", nil))
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("pid: %q", pid)
	}
	res := fc.callTool(t, "child__big", nil)
	if !res.IsError || !strings.Contains(testlib.ToolText(res), "more than the gateway reads") {
		t.Fatalf("oversize result: isError %v, %.200q", res.IsError, testlib.ToolText(res))
	}
	if got := testlib.ToolText(fc.callTool(t, "child__pid", nil)); got != pid {
		t.Errorf("after the oversize result: pid %q, want %q (the same process)", got, pid)
	}
	if st := g.health().Servers[0]; st.State != stateReady {
		t.Errorf("health: %+v", st)
	}
}

func TestLineLimiter(t *testing.T) {
	big := strings.Repeat("y", 100)
	resp7 := `{"jsonrpc":"2.0","id":7,"result":{"t":"` + big + "\"}}\n"
	respAB := `{"result":{"t":"` + big + `"},"jsonrpc":"2.0","id":"a\"b"}` + "\n"
	msg := func(line string) string {
		return `{"code":-32603,"message":"the result is ` + strconv.Itoa(len(line)) + ` bytes, more than the gateway reads (64); the server is still connected"}`
	}
	tests := []struct {
		name, in, want string
	}{
		{"short lines pass", "{\"id\":1,\"result\":{}}\n{\"method\":\"x\"}\n", "{\"id\":1,\"result\":{}}\n{\"method\":\"x\"}\n"},
		{"no final newline", `{"id":1}`, `{"id":1}`},
		{"response replaced", resp7 + `{"id":8,"result":{}}` + "\n",
			`{"error":` + msg(resp7) + `,"id":7,"jsonrpc":"2.0"}` + "\n" + `{"id":8,"result":{}}` + "\n"},
		{"id last", respAB, `{"error":` + msg(respAB) + `,"id":"a\"b","jsonrpc":"2.0"}` + "\n"},
		{"notification dropped", `{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"` + big + "\"}}\n{\"id\":2,\"result\":{}}\n", "{\"id\":2,\"result\":{}}\n"},
		{"nested id ignored", `{"result":{"id":3,"t":"` + big + "\"}}\n", ""},
		{"garbage dropped", big + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A reader buffer smaller than the limit, so lines arrive in pieces.
			var logged []string
			l := &lineLimiter{r: bufio.NewReaderSize(strings.NewReader(tt.in), 16), max: 64,
				logf: func(f string, a ...any) { logged = append(logged, f) }}
			got, err := io.ReadAll(l)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if dropped := len(tt.in) > 64 && !strings.HasPrefix(tt.name, "short"); dropped != (len(logged) > 0) {
				t.Errorf("logged %v", logged)
			}
		})
	}
}

// FuzzTopScan: the scan of a line, fed in any pieces, gives what the whole line gives, and a
// reply it makes is one JSON-RPC error response carrying the line's own id.
func FuzzTopScan(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"result":1,"id":"x\"y"}`, `{"id":{"a":1},"error":{}}`,
		`{"method":"m","id":1,"result":2}`, `{"id":-1.5e3,"error":null}`, `not json`, `{"id":1`, `{"a":"\\","id":2,"result":0}`, `{"id":"&0","result":1}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, line []byte, cut uint8) {
		var whole, pieces topScan
		whole.feed(line)
		k := int(cut) % (len(line) + 1)
		pieces.feed(line[:k])
		pieces.feed(line[k:])
		a, b := whole.reply(1000, 10), pieces.reply(1000, 10)
		if !bytes.Equal(a, b) {
			t.Fatalf("whole %q, in pieces %q", a, b)
		}
		if a == nil {
			return
		}
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(a, &msg); err != nil || msg.Error.Code != -32603 || !bytes.Contains(line, msg.ID) {
			t.Fatalf("reply %q: %v", a, err)
		}
	})
}
