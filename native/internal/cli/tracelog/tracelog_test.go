package tracelog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/table"
)

// skills are the names of the fixtures' library: a few of graphs/sample's.
var skills = []string{"go-to-location", "pick-up-object", "heat-object-in-microwave", "put-down-object",
	"look-around-room", "open-receptacle", "take-object-from-receptacle", "turn-on-faucet", "pick-up-knife",
	"slice-object-with-knife", "cool-object-in-fridge", "turn-on-lamp", "examine-object-under-lamp",
	"plant-seed-in-pot", "water-planted-seed", "find-object", "place-object-in-receptacle", "verify-object-hot"}

func TestMatch(t *testing.T) {
	m := NewMatcher(append(skills, "tool", "Make_Coffee", "make-coffee"))
	for _, tc := range []struct {
		name, in, want string
		how            How
	}{
		{"exact", "go-to-location", "go-to-location", Exact},
		{"exact is case sensitive first", "Make_Coffee", "Make_Coffee", Exact},
		{"case", "Go-To-Location", "go-to-location", Normalized},
		{"underscore", "go_to_location", "go-to-location", Normalized},
		{"dot", "go.to.location", "go-to-location", Normalized},
		{"space", "go to  location", "go-to-location", Normalized},
		{"mixed separator runs", "_go__to-.location_", "go-to-location", Normalized},
		{"camel case", "goToLocation", "go-to-location", Normalized},
		{"server__tool", "kitchen__turn_on_faucet", "turn-on-faucet", Normalized},
		{"mcp__server__tool", "mcp__kitchen__turn_on_faucet", "turn-on-faucet", Normalized},
		{"mcp__server with underscores__tool", "mcp__my_kitchen__turn_on_faucet", "turn-on-faucet", Normalized},
		{"server.tool", "kitchen.turn_on_faucet", "turn-on-faucet", Normalized},
		{"server/tool", "home/kitchen/turn-on-faucet", "turn-on-faucet", Normalized},
		{"plugin:skill", "household:turn-on-faucet", "turn-on-faucet", Normalized},
		{"server kept when the skill has it", "mcp__tool", "tool", Normalized},
		{"shared key matches neither", "make.coffee", "", Unmatched},
		{"unknown", "Read", "", Unmatched},
		{"empty", "", "", Unmatched},
		{"separators only", "__", "", Unmatched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, how := m.Match(tc.in)
			if got != tc.want || how != tc.how {
				t.Errorf("Match(%q) = %q, %d; want %q, %d", tc.in, got, how, tc.want, tc.how)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Pick_Up_Object", "pick-up-object"},
		{"pickUpObject", "pick-up-object"},
		{"step2Go", "step2-go"},
		{"HTTP", "http"},
		{" a . b ", "a-b"},
		{"ÜberTool", "über-tool"},
	} {
		if got := key(tc.in); got != tc.want {
			t.Errorf("key(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return data
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    []taskLog
		skipped int
	}{
		{"claude-code.jsonl", []taskLog{
			{ClaudeCode, "s1", "heat an egg and put it in the garbage can", 2, []string{"go-to-location", "pick-up-object", "Read",
				"mcp__kitchen__heat_object_in_microwave", "mcp__kitchen__heat_object_in_microwave", "put-down-object"}},
			{ClaudeCode, "s2", "find the apple in the fridge", 10, []string{"look-around-room", "Open_Receptacle", "Bash"}},
		}, 1},
		{"openai-chat.jsonl", []taskLog{
			{OpenAIChat, "chatcmpl-1", "cool an apple", 1, []string{"go_to_location", "cool-object-in-fridge", "get_weather"}},
			{OpenAIChat, "chatcmpl-2", "slice the bread", 2, []string{"pickUpKnife", "slice-object-with-knife"}},
			{OpenAIChat, "chatcmpl-3", "", 3, []string{"get_weather"}},
		}, 0},
		{"openai-responses.json", []taskLog{
			{OpenAIResponses, "resp_1", "turn on the lamp and examine the object", 2, []string{"turn-on-lamp", "lights.examine_object_under_lamp"}},
			{OpenAIResponses, "resp_2", "water the seed", 12, []string{"plant-seed-in-pot", "garden/water_planted_seed"}},
		}, 0},
		{"mcp.jsonl", []taskLog{
			{MCP, "mcp.jsonl", "", 1, []string{"open-receptacle", "take_object_from_receptacle", "search_web"}},
			{MCP, "b", "", 8, []string{"kitchen__turn_on_faucet"}},
		}, 0},
		{"caskg.jsonl", []taskLog{
			{Caskg, "r1", "", 1, []string{"find-object", "pick-up-object", "Pick_Up_Object", "place-object-in-receptacle"}},
			{Caskg, "2", "check the egg is hot", 2, []string{"not-a-skill", "verify-object-hot"}},
		}, 0},
		{"codex.jsonl", []taskLog{
			{Codex, "cx-1", "cool the apple and put it on the table", 1, []string{"go-to-location", "kitchen__cool_object_in_fridge",
				"place-object-in-receptacle", "local_shell", "shell"}},
		}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := parseFile(filepath.Join("testdata", tc.file), readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			if got.Skipped != tc.skipped || len(got.Problems) > 0 {
				t.Errorf("skipped %d records, want %d; problems %v", got.Skipped, tc.skipped, got.Problems)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []taskLog
	}{
		{"chat single document", "{\n \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],\n \"choices\": [{\"message\": {\"function_call\": {\"name\": \"f\"}}}]\n}",
			[]taskLog{{OpenAIChat, "f.log:1", "hi", 1, []string{"f"}}}},
		{"only the first choice", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"a"}}]}},{"message":{"tool_calls":[{"function":{"name":"b"}}]}}]}`,
			[]taskLog{{OpenAIChat, "f.log:1", "", 1, []string{"a"}}}},
		{"responses request only", `{"model":"m","input":"do it"}`,
			[]taskLog{{OpenAIResponses, "f.log:1", "do it", 1, nil}}},
		{"mcp batch line", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}]`,
			[]taskLog{{MCP, "f.log", "", 1, []string{"a", "b"}}}},
		{"mcp session field", `{"session_id":"x","message":{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}}`,
			[]taskLog{{MCP, "x", "", 1, []string{"a"}}}},
		{"formats mixed per line", "{\"id\":\"t\",\"skills\":[\"a\"]}\n{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}",
			[]taskLog{{Caskg, "t", "", 1, []string{"a"}}, {MCP, "f.log", "", 2, []string{"b"}}}},
		{"claude skill without name keeps Skill", `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","name":"Skill","input":{}}]}}`,
			[]taskLog{{ClaudeCode, "s", "", 1, []string{"Skill"}}}},
		{"claude skill name with spaces whole", `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","name":"Skill","input":{"skill":"Automatic Speech Recognition (ASR)"}}]}}`,
			[]taskLog{{ClaudeCode, "s", "", 1, []string{"Automatic Speech Recognition (ASR)"}}}},
		{"claude get_skill counts as the skill", `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","name":"mcp__caskg__get_skill","input":{"name":"pick-up-object"}},{"type":"tool_use","name":"mcp__caskg__get_skill","input":{}}]}}`,
			[]taskLog{{ClaudeCode, "s", "", 1, []string{"pick-up-object", "mcp__caskg__get_skill"}}}},
		{"claude read of a SKILL.md", `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","name":"Read","input":{"file_path":"/home/u/.claude/skills/turn-on-lamp/SKILL.md"}}]}}`,
			[]taskLog{{ClaudeCode, "s", "", 1, []string{"turn-on-lamp"}}}},
		{"mcp get_skill", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_skill","arguments":{"name":"find-object"}}}`,
			[]taskLog{{MCP, "f.log", "", 1, []string{"find-object"}}}},
		{"chat get_skill arguments string", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"caskg__get_skill","arguments":"{\"name\":\"turn-on-lamp\"}"}}]}}]}`,
			[]taskLog{{OpenAIChat, "f.log:1", "", 1, []string{"turn-on-lamp"}}}},
		{"codex item without envelope", `{"type":"function_call","name":"kitchen__turn_on_faucet","arguments":"{}","call_id":"c1"}`,
			[]taskLog{{Codex, "f.log", "", 1, []string{"kitchen__turn_on_faucet"}}}},
		{"codex task from event when no message", "{\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"water the seed\"}}",
			[]taskLog{{Codex, "f.log", "water the seed", 1, nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parsed, err := parseFile("dir/f.log", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got := parsed.Logs
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseProblems checks that a bad record is reported with its file and line and the rest of
// the file is read.
func TestParseProblems(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		problems []string // Problem.Error() prefixes
		calls    []string // of every log, in order
	}{
		{"bad line", "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n\n{oops\n{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}",
			[]string{"tracelog: f.log:3: not JSON"}, []string{"a", "b"}},
		{"not an object", "{\"jsonrpc\":\"2.0\"}\n42\n", []string{"tracelog: f.log:2: not a JSON object"}, nil},
		{"skills not a list", "{\"id\":\"a\",\"skills\":\"x\"}\n{\"id\":\"b\",\"skills\":[\"y\"]}",
			[]string{`tracelog: f.log:1: field "skills" is not an array of names`}, []string{"y"}},
		{"skill not a name", "{\"id\":\"a\",\"skills\":[\"x\"]}\n{\"id\":\"b\",\"skills\":[\"x\",3]}",
			[]string{`tracelog: f.log:2: field "skills": entry 2 is not a name`}, []string{"x"}},
		{"array element", "[\n {\"id\":\"a\",\"skills\":[\"x\"]},\n {\"id\":\"b\",\"skills\":[]},\n {\"id\":\"c\",\"skills\":[1]}\n]",
			[]string{"tracelog: f.log:4: field"}, []string{"x"}},
		{"several, in line order", "{bad\n{\"id\":\"a\",\"skills\":3}\n[1]\n{\"id\":\"b\",\"skills\":[\"z\"]}\nnull",
			[]string{"tracelog: f.log:1: not JSON", "tracelog: f.log:2: field", "tracelog: f.log:5: not a JSON object"}, []string{"z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFile("f.log", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Problems) != len(tc.problems) {
				t.Fatalf("problems %v, want %d", got.Problems, len(tc.problems))
			}
			for i, p := range got.Problems {
				if !strings.HasPrefix(p.Error(), tc.problems[i]) {
					t.Errorf("problem %d = %q, want one starting %q", i, p.Error(), tc.problems[i])
				}
			}
			var calls []string
			for _, l := range got.Logs {
				calls = append(calls, l.Calls...)
			}
			if diff := cmp.Diff(tc.calls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	parse := func(in string) error {
		_, err := parseFile("f.log", []byte(in))
		return err
	}
	table.Errors(t, "parseFile", parse, []table.Case[string, string]{
		{"unknown format", `{"hello":"world"}`, "tracelog: f.log: no known log format"},
		{"nothing readable", "oops\n\x00\x01\n", "tracelog: f.log: no JSON record (2 bad lines; the first: 1: not JSON"},
		{"one line, not JSON", "oops\n", "tracelog: f.log: no JSON record (1 bad line; the first: 1: not JSON"},
	})
}

// TestImportNames checks how calls become skills: a name with spaces whole, a slash command by
// its first word, and a name that is not a skill not by a word of it.
func TestImportNames(t *testing.T) {
	im := NewImporter(NewMatcher(append(skills, "Automatic Speech Recognition (ASR)", "pdf")))
	in := `{"id":"a","skills":["Automatic Speech Recognition (ASR)","pdf extract tables","automatic speech recognition (asr)","go to the kitchen"]}`
	if _, err := im.Add("f", []byte(in)); err != nil {
		t.Fatal(err)
	}
	want := []Trace{{ID: "a", Skills: []string{"Automatic Speech Recognition (ASR)", "pdf", "Automatic Speech Recognition (ASR)"}}}
	if diff := cmp.Diff(want, im.Traces()); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	if r := im.Report(); len(r.Unmatched) != 1 || r.Unmatched[0].Name != "go to the kitchen" {
		t.Errorf("unmatched %v, want only the sentence", r.Unmatched)
	}
}

func TestImport(t *testing.T) {
	im := NewImporter(NewMatcher(skills))
	for _, f := range []string{"claude-code.jsonl", "openai-chat.jsonl", "openai-responses.json", "mcp.jsonl", "caskg.jsonl"} {
		if _, err := im.Add(f, readFixture(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	want := Report{
		Formats: []FormatStats{
			{ClaudeCode, 1, 2, 9, 4, 3, 2},
			{OpenAIChat, 1, 3, 6, 2, 2, 2},
			{OpenAIResponses, 1, 2, 4, 2, 2, 0},
			{MCP, 1, 2, 4, 1, 2, 1},
			{Caskg, 1, 2, 6, 4, 1, 1},
		},
		Skipped: 1, Written: 10, Empty: 1, Collapsed: 2,
		Unmatched: []NameCount{{"get_weather", "", 2}, {"Bash", "", 1}, {"Read", "", 1}, {"not-a-skill", "", 1}, {"search_web", "", 1}},
		Normalized: []NameCount{
			{"mcp__kitchen__heat_object_in_microwave", "heat-object-in-microwave", 2},
			{"Open_Receptacle", "open-receptacle", 1}, {"Pick_Up_Object", "pick-up-object", 1},
			{"garden/water_planted_seed", "water-planted-seed", 1}, {"go_to_location", "go-to-location", 1},
			{"kitchen__turn_on_faucet", "turn-on-faucet", 1}, {"lights.examine_object_under_lamp", "examine-object-under-lamp", 1},
			{"pickUpKnife", "pick-up-knife", 1}, {"take_object_from_receptacle", "take-object-from-receptacle", 1},
		},
	}
	if diff := cmp.Diff(want, im.Report()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	tr := im.Traces()
	if got, want := tr[0], (Trace{"s1", "heat an egg and put it in the garbage can",
		[]string{"go-to-location", "pick-up-object", "heat-object-in-microwave", "put-down-object"}}); !cmp.Equal(got, want) {
		t.Errorf("first trace %+v, want %+v", got, want)
	}
	lines := strings.Split(strings.TrimSpace(string(Encode(tr))), "\n")
	if len(lines) != 10 || lines[9] != `{"id":"2","task":"check the egg is hot","skills":["verify-object-hot"]}` {
		t.Errorf("encoded %d lines, last %s", len(lines), lines[len(lines)-1])
	}
}

func TestTopKeepsTen(t *testing.T) {
	im := NewImporter(NewMatcher(nil))
	var calls []string
	for i := range 12 {
		for range i + 1 {
			calls = append(calls, string(rune('a'+i)))
		}
	}
	if _, err := im.Add("f", []byte(`{"id":"x","skills":["`+strings.Join(calls, `","`)+`"]}`)); err != nil {
		t.Fatal(err)
	}
	u := im.Report().Unmatched
	if len(u) != topN || u[0] != (NameCount{"l", "", 12}) || u[9].Name != "c" {
		t.Errorf("top unmatched %v", u)
	}
}
