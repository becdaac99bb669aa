package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/caskg/caskg/wasm/engine"
)

func engineOf(t *testing.T, artifact []byte) *engine.Engine {
	t.Helper()
	return engine.New(testlib.Decode(t, artifact))
}

// TestCJKQueries holds Tokenize's bigrams to what a user of a library in Chinese, Japanese or
// Korean notices: a query that shares words with a skill, not its phrasing, finds it first.
func TestCJKQueries(t *testing.T) {
	e := engineOf(t, testlib.Multilingual(t))
	cases := []table.Case[string, string]{
		// The skill says 查询指定城市的天气预报: 查询 and 天气 are shared, the sentence is not.
		{"Chinese weather", "帮我查询北京的天气", "weather-forecast-zh"},
		{"Chinese currency", "把一百美元换算成人民币", "currency-exchange-zh"},
		{"Chinese translation", "请把这份合同翻译成英文", "translate-document-zh"},
		{"Chinese with Latin", "用Python从PDF里提取表格", "pdf-table-extract-zh"},
		{"Japanese weather", "東京の明日の天気予報を教えて", "weather-forecast-ja"},
		{"Japanese currency", "ドルを円に換算したい", "currency-exchange-ja"},
		{"Korean weather", "서울 날씨 예보 알려줘", "weather-forecast-ko"},
		{"Korean translation", "이 문서를 영어로 번역해 주세요", "translate-document-ko"},
		{"English beside them", "chance of rain and temperature in Paris", "weather-forecast-en"},
	}
	for _, noGraph := range []bool{false, true} {
		// first is the skill ranked first for the query q; a note would say a term is unknown,
		// and none is: the queries' terms are the library's.
		first := func(q string) string {
			resp, err := e.Query(engine.Request{Query: q, K: 3, NoGraph: noGraph})
			switch {
			case err != nil:
				return err.Error()
			case resp.Note != "":
				return "note: " + resp.Note
			case len(resp.Results) == 0:
				return "no results"
			}
			return resp.Results[0].Name
		}
		t.Run(fmt.Sprintf("no_graph %v", noGraph), func(t *testing.T) {
			table.Run(t, "first", first, cases)
		})
	}
}

// TestNoTermNote checks that a query none of whose terms a library knows is answered with a
// note saying so, never an empty list without a word; and that a known term silences it.
func TestNoTermNote(t *testing.T) {
	english := engineOf(t, testlib.Sample(t))
	mixed := engineOf(t, testlib.Multilingual(t))
	const head = "no term of the query is in this library's index: "
	tests := []struct {
		name  string
		e     *engine.Engine
		query string
		note  string // "" for none
	}{
		{"Korean on English", english, "서울 날씨 알려줘", head + "서울, 날씨, 알려, 려줘"},
		{"Chinese on English", english, "帮我查询北京的天气", head + "帮我, 我查, 查询, 询北, 北京, 京的, 的天, 天气"},
		{"more terms than named", english, "帮我查询北京明天的天气", head + "帮我, 我查, 查询, 询北, 北京, 京明, 明天, 天的 and 2 more"},
		{"stop words only", english, "what is it", head + "it has only stop words, single letters or symbols"},
		{"symbols only", english, "?! …", head + "it has only stop words, single letters or symbols"},
		{"unknown Latin words", english, "zzqx wvbk", head + "zzqx, wvbk"},
		// A known word silences the no-term note; half the query's weight unknown, the answer
		// is weak (TestMatchStrength).
		{"a known word among them", english, "서울 water", engine.WeakMatchNote},
		{"a typo of a known word", english, "microwve", ""},
		{"Korean on the multilingual library", mixed, "날씨 예보", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, req := range []engine.Request{
				{Query: tt.query},
				{Query: tt.query, NoGraph: true},
				{Query: tt.query, Render: true},
			} {
				resp, err := tt.e.Query(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Note != tt.note {
					t.Errorf("%+v: note %q, want %q", req, resp.Note, tt.note)
				}
				if req.Render && tt.note != "" && !strings.Contains(resp.Rendered, "\nNote: "+tt.note+".\n") {
					t.Errorf("the rendered text lacks the note:\n%s", resp.Rendered)
				}
			}
		})
	}
}

func names(rs []engine.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}
