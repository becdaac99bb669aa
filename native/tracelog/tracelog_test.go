package tracelog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		want    []Log
		skipped int
	}{
		{"claude-code.jsonl", []Log{
			{ClaudeCode, "s1", "heat an egg and put it in the garbage can", 2, []string{"go-to-location", "pick-up-object", "Read",
				"mcp__kitchen__heat_object_in_microwave", "mcp__kitchen__heat_object_in_microwave", "put-down-object"}},
			{ClaudeCode, "s2", "find the apple in the fridge", 10, []string{"look-around-room", "Open_Receptacle", "Bash"}},
		}, 1},
		{"openai-chat.jsonl", []Log{
			{OpenAIChat, "chatcmpl-1", "cool an apple", 1, []string{"go_to_location", "cool-object-in-fridge", "get_weather"}},
			{OpenAIChat, "chatcmpl-2", "slice the bread", 2, []string{"pickUpKnife", "slice-object-with-knife"}},
			{OpenAIChat, "chatcmpl-3", "", 3, []string{"get_weather"}},
		}, 0},
		{"openai-responses.json", []Log{
			{OpenAIResponses, "resp_1", "turn on the lamp and examine the object", 2, []string{"turn-on-lamp", "lights.examine_object_under_lamp"}},
			{OpenAIResponses, "resp_2", "water the seed", 12, []string{"plant-seed-in-pot", "garden/water_planted_seed"}},
		}, 0},
		{"mcp.jsonl", []Log{
			{MCP, "mcp.jsonl", "", 1, []string{"open-receptacle", "take_object_from_receptacle", "search_web"}},
			{MCP, "b", "", 8, []string{"kitchen__turn_on_faucet"}},
		}, 0},
		{"caskg.jsonl", []Log{
			{Caskg, "r1", "", 1, []string{"find-object", "pick-up-object", "Pick_Up_Object", "place-object-in-receptacle"}},
			{Caskg, "2", "check the egg is hot", 2, []string{"not-a-skill", "verify-object-hot"}},
		}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, skipped, err := Parse(filepath.Join("testdata", tc.file), readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			if skipped != tc.skipped {
				t.Errorf("skipped %d records, want %d", skipped, tc.skipped)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Log
	}{
		{"chat single document", "{\n \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],\n \"choices\": [{\"message\": {\"function_call\": {\"name\": \"f\"}}}]\n}",
			[]Log{{OpenAIChat, "f.log:1", "hi", 1, []string{"f"}}}},
		{"only the first choice", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"a"}}]}},{"message":{"tool_calls":[{"function":{"name":"b"}}]}}]}`,
			[]Log{{OpenAIChat, "f.log:1", "", 1, []string{"a"}}}},
		{"responses request only", `{"model":"m","input":"do it"}`,
			[]Log{{OpenAIResponses, "f.log:1", "do it", 1, nil}}},
		{"mcp batch line", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}]`,
			[]Log{{MCP, "f.log", "", 1, []string{"a", "b"}}}},
		{"mcp session field", `{"session_id":"x","message":{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}}`,
			[]Log{{MCP, "x", "", 1, []string{"a"}}}},
		{"formats mixed per line", "{\"id\":\"t\",\"skills\":[\"a\"]}\n{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}",
			[]Log{{Caskg, "t", "", 1, []string{"a"}}, {MCP, "f.log", "", 2, []string{"b"}}}},
		{"claude skill without name keeps Skill", `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","name":"Skill","input":{}}]}}`,
			[]Log{{ClaudeCode, "s", "", 1, []string{"Skill"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Parse("dir/f.log", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"bad line", "{\"jsonrpc\":\"2.0\"}\n\n{oops\n", "tracelog: f.log:3: not JSON"},
		{"not an object", "{\"jsonrpc\":\"2.0\"}\n42\n", "tracelog: f.log:2: not a JSON object"},
		{"skills not a list", "{\"id\":\"a\",\"skills\":\"x\"}", `tracelog: f.log:1: field "skills" is not an array of names`},
		{"skill not a name", "{\"id\":\"a\",\"skills\":[\"x\"]}\n{\"id\":\"b\",\"skills\":[\"x\",3]}", `tracelog: f.log:2: field "skills": entry 2 is not a name`},
		{"array element line", "[\n {\"id\":\"a\",\"skills\":[\"x\"]},\n {\"id\":\"b\",\"skills\":[]},\n {\"id\":\"c\",\"skills\":[1]}\n]", "tracelog: f.log:4: field"},
		{"unknown format", `{"hello":"world"}`, "tracelog: f.log: no known log format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("f.log", []byte(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want one starting %q", err, tc.want)
			}
		})
	}
}

func TestImport(t *testing.T) {
	im := NewImporter(NewMatcher(skills))
	for _, f := range []string{"claude-code.jsonl", "openai-chat.jsonl", "openai-responses.json", "mcp.jsonl", "caskg.jsonl"} {
		if err := im.Add(f, readFixture(t, f)); err != nil {
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
	if err := im.Add("f", []byte(`{"id":"x","skills":["`+strings.Join(calls, `","`)+`"]}`)); err != nil {
		t.Fatal(err)
	}
	u := im.Report().Unmatched
	if len(u) != TopN || u[0] != (NameCount{"l", "", 12}) || u[9].Name != "c" {
		t.Errorf("top unmatched %v", u)
	}
}
