package mcpcore

import (
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// TestRetrieveCJK holds retrieve_skills to what an agent in another script reads: a Chinese
// task finds the Chinese skill of the multilingual library, and a Korean task on the English
// sample gets the engine's note in its structured content and its text, rendered or listed.
func TestRetrieveCJK(t *testing.T) {
	multi := New(engine.New(testlib.Decode(t, testlib.Multilingual(t))), Options{Version: "test", Artifact: "multilingual.skg"})
	english := handler(t)
	const note = "no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"
	tests := []struct {
		name      string
		h         *Handler
		args      string
		want, not []string
	}{
		{"Chinese finds Chinese", multi, `{"query":"帮我查询北京的天气","render":false}`,
			[]string{`"results":[{"rank":1,"name":"weather-forecast-zh"`, `1. weather-forecast-zh (seed #1)`}, []string{`"note"`, "Note:"}},
		{"Korean on English, listed", english, `{"query":"서울 날씨 알려줘","render":false}`,
			[]string{`"results":[],"match":0,"note":"` + note + `"`, `No skills found for this task.\nNote: ` + note + `.\n`}, nil},
		{"Korean on English, rendered", english, `{"query":"서울 날씨 알려줘"}`,
			[]string{`"results":[],"match":0,"note":"` + note + `"`, `\nNote: ` + note + `.\n`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(tt.h, call("retrieve_skills", tt.args))
			body := string(resp.Body)
			if resp.Status != 200 || strings.Contains(body, `"isError":true`) {
				t.Fatalf("%d %s", resp.Status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, strings.ReplaceAll(w, "\n", `\n`)) {
					t.Errorf("answer lacks %s:\n%s", w, body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("answer has %s:\n%s", n, body)
				}
			}
		})
	}
}
