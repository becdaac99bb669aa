package mcptransport

import (
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckLine: no line panics checkLine, and each is either a message or a JSON-RPC error
// with a standard code and a short message.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{"not json", "[]", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "42", `{"id":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"x"}`, `{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, `{"jsonrpc":"2.0","result":{}}`, "\xff",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		msg, _, e := checkLine([]byte(line), false, 1<<20)
		if (msg == nil) == (e == nil) {
			t.Fatalf("%q: message %v and error %v", line, msg, e)
		}
		if e != nil && (e.Code != jsonrpc.CodeParseError && e.Code != jsonrpc.CodeInvalidRequest || utf8.RuneCountInString(e.Message) > 200) {
			t.Fatalf("%q: error %d %q", line, e.Code, e.Message)
		}
		if !utf8.ValidString(line) && (e == nil || e.Code != jsonrpc.CodeParseError) {
			t.Fatalf("%q (not UTF-8): message %v, error %v; want a parse error", line, msg, e)
		}
	})
}

// TestCheckLineUTF8: a line that is not valid UTF-8 is a parse error, with no id to answer
// (as the HTTP side answers a body that is not), wherever the bad byte is; valid UTF-8
// beyond ASCII passes.
func TestCheckLineUTF8(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"`
	tests := []struct {
		name, line, want string // want "" for a message
	}{
		{"in a string", ping + "\xff\"}}", "parse error: the line is not valid UTF-8 at byte 55"},
		{"a lone continuation byte", ping + "a\x80\"}}", "parse error: the line is not valid UTF-8 at byte 56"},
		{"a cut sequence", ping + "\xc3\"}}", "parse error: the line is not valid UTF-8 at byte 55"},
		{"a surrogate", ping + "\xed\xa0\x80\"}}", "parse error: the line is not valid UTF-8 at byte 55"},
		{"in a key", `{"jsonrpc":"2.0","id":3,"method":"ping","` + "\xfe" + `":1}`, "parse error: the line is not valid UTF-8 at byte 41"},
		{"after blanks", "  " + ping + "\xff\"}}", "parse error: the line is not valid UTF-8 at byte 57"},
		{"valid beyond ASCII", ping + "é😀\"}}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, id, e := checkLine([]byte(tt.line), false, 1<<20)
			switch {
			case tt.want == "" && e != nil:
				t.Fatalf("error %d %q, want a message", e.Code, e.Message)
			case tt.want == "":
				if msg == nil {
					t.Fatal("no message")
				}
			case e == nil || e.Code != jsonrpc.CodeParseError || e.Message != tt.want || id != nil:
				t.Fatalf("message %v, id %s, error %v; want a parse error %q with no id", msg, id, e, tt.want)
			}
		})
	}
}
