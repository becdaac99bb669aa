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
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, `{"jsonrpc":"2.0","result":{}}`, "\xff"} {
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
	})
}
