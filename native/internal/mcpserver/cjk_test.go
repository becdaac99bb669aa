package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/testlib"
)

// TestRetrieveCJK holds caskg mcp's retrieve_skills to what an agent in another script reads: a
// Chinese task finds the Chinese skill of the multilingual library, and a Korean task on the
// English sample gets the engine's note, structured and in the text, rendered or listed.
func TestRetrieveCJK(t *testing.T) {
	multi := connect(t, testlib.Decode(t, testlib.Multilingual(t)), mcpserver.Options{})
	english := connect(t, sample(t), mcpserver.Options{})
	const note = "no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"

	var got struct {
		retrieved
		Note string `json:"note"`
	}
	res := call(t, multi, "retrieve_skills", map[string]any{"query": "帮我查询北京的天气", "render": false})
	structured(t, res, &got)
	if len(got.Results) == 0 || got.Results[0].Name != "weather-forecast-zh" || got.Note != "" {
		t.Errorf("帮我查询北京的天气: %+v, want weather-forecast-zh first and no note", got)
	}
	for _, render := range []bool{false, true} {
		got.Note = ""
		res := call(t, english, "retrieve_skills", map[string]any{"query": "서울 날씨 알려줘", "render": render})
		structured(t, res, &got)
		if len(got.Results) != 0 || got.Note != note {
			t.Errorf("render %v: %d results, note %q; want none and %q", render, len(got.Results), got.Note, note)
		}
		if txt := text(t, res); !strings.Contains(txt, "Note: "+note+".\n") {
			t.Errorf("render %v: the text lacks the note:\n%s", render, txt)
		}
	}
}
