package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// kitTools are a downstream's tools, enough of them that a memory of past tasks can lift a
// tool set above the others (with fewer than ten, every set is in the first ten anyway and
// calibration silences the memory).
var kitTools = [][2]string{
	{"boil_water", "Boil water in a kettle."}, {"brew_tea", "Steep tea leaves in hot water."},
	{"charge_phone", "Charge a phone battery."}, {"switch_lamp", "Switch a lamp on or off."},
	{"water_lawn", "Water the lawn with a sprinkler."}, {"water_plant", "Water a potted plant."},
	{"read_mail", "Read a mail from the inbox."}, {"send_mail", "Send a mail."},
	{"list_files", "List the files in a folder."}, {"zip_files", "Pack files into an archive."},
	{"set_alarm", "Set an alarm clock."}, {"play_music", "Play a song on the speaker."},
	{"order_food", "Order a meal for delivery."}, {"book_taxi", "Book a taxi ride."},
}

func kitServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "kit"}, nil)
	for _, tool := range kitTools {
		addTool(srv, tool[0], tool[1], func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return text(tool[0]), nil })
	}
	return srv
}

// kitRuns are sessions over kitServer whose searches named their tool sets in made-up words,
// so that only the memory knows which tools they ask for.
func kitRuns() []builder.Trace {
	phrases := []struct {
		words string
		tools []string
	}{
		{"zorblax ritual", []string{"kit__boil_water", "kit__brew_tea"}},
		{"quenfit routine", []string{"kit__charge_phone", "kit__switch_lamp"}},
		{"vimbrel chores", []string{"kit__water_lawn", "kit__water_plant"}},
	}
	// Each task also names other tools' words, as real tasks do, so that without the memory those
	// tools come first.
	frames := []string{"send the mail, then the %s", "play music for the %s", "list files after the %s",
		"order food and do the %s", "book a taxi after my %s", "set an alarm for the %s",
		"zip files before the %s", "read mail during the %s"}
	var runs []builder.Trace
	for _, p := range phrases {
		for i, f := range frames {
			runs = append(runs, builder.Trace{ID: fmt.Sprint(p.words, i), Skills: p.tools, Task: fmt.Sprintf(f, p.words)})
		}
	}
	return runs
}

// TestSearchRecalled: search_tools over a graph whose memory of past tasks raised a tool says
// so in its structured content (recalled) and its text (found by past tasks, the recalled
// line); over the same catalog's graph without a memory, neither appears.
func TestSearchRecalled(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{{Name: "kit", Command: "unused", Timeout: 500 * time.Millisecond}}}
	rec := &recorder{}
	g := startGateway(t, cfg, Options{Learner: rec, dial: inMemory(t, map[string]func() *mcp.Server{"kit": kitServer})})
	skills, problems := ingest.ParseTools(g.catalog(), "catalog.json")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	withMemory := testlib.Graph(t, builder.Input{Skills: skills, Runs: kitRuns()})
	if _, _, _, w, _, _ := withMemory.MemoryParams(); w == 0 {
		t.Fatalf("the memory is silent (weight 0): %s", withMemory.Params())
	}
	tests := []struct {
		name     string
		graph    *graphs.Graph
		recalled bool
	}{
		{"memory", withMemory, true},
		{"no memory", testlib.Graph(t, builder.Input{Skills: skills}), false},
	}
	fc := connect(t, g)
	for _, tt := range tests {
		rec.mu.Lock()
		rec.graph, rec.eng = tt.graph, engine.New(tt.graph)
		rec.mu.Unlock()
		res, out := fc.search(t, "heat water for the zorblax ritual", 5)
		body := testlib.ToolText(res)
		if tt.recalled && testing.Verbose() {
			t.Log(body)
		}
		if out.Ranking != "graph" {
			t.Fatalf("%s: ranking %q", tt.name, out.Ranking)
		}
		raised := map[string]bool{}
		for _, tool := range out.Tools {
			if tool.Recalled == nil {
				continue
			}
			raised[tool.Name] = true
			if line := "   - " + tool.Recalled.Evidence() + "\n"; !strings.Contains(body, line) {
				t.Errorf("%s: %s's %q not in the text:\n%s", tt.name, tool.Name, line, body)
			}
		}
		if got := raised["kit__brew_tea"] && raised["kit__boil_water"]; got != tt.recalled {
			t.Errorf("%s: the ritual's tools recalled: %v, want %v; tools %+v", tt.name, got, tt.recalled, out.Tools)
		}
		if got := strings.Contains(body, "recalled: "); got != tt.recalled {
			t.Errorf("%s: text has a recalled line: %v, want %v:\n%s", tt.name, got, tt.recalled, body)
		}
	}
}
