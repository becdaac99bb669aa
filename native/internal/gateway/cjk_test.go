package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/testlib"
)

// TestSearchNoTermNote holds search_tools to what an agent asking in another language than the
// tools' reads: the tools it lists stand in, and a note says no term of the task is known, over
// the lexical ranking and over a graph alike; a task the tools' words match has no such note.
func TestSearchNoTermNote(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: time.Second}}}
	servers := map[string]func() *mcp.Server{"alpha": alphaServer}
	lexicalGW, graphGW := lexicalAndGraph(t, cfg, servers)

	const note = "no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"
	for _, gw := range []struct {
		name string
		g    *Gateway
	}{{"lexical", lexicalGW}, {"graph", graphGW}} {
		t.Run(gw.name, func(t *testing.T) {
			fc := connect(t, gw.g)
			res, out := fc.search(t, "서울 날씨 알려줘", 2)
			if len(out.Tools) != 2 || !strings.HasPrefix(out.Note, note) {
				t.Errorf("tools %v, note %q; want 2 tools and a note starting %q", names(out), out.Note, note)
			}
			if txt := testlib.ToolText(res); !strings.Contains(txt, "Note: "+note) {
				t.Errorf("the text lacks the note:\n%s", txt)
			}
			_, out = fc.search(t, "read the text of a file", 2)
			if strings.Contains(out.Note, "no term") {
				t.Errorf("a task the tools' words match: note %q", out.Note)
			}
		})
	}
}
