package gatewaycurve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/eval"
)

// tools is a small catalog of two workflows whose steps share no words with the tasks: text
// alone cannot put a workflow's steps together, the runs through the gateway can.
const tools = `{"tools": [
 {"name": "open_ledger", "description": "Open the accounting ledger file for a company.", "inputSchema": {"type": "object", "properties": {"company": {"type": "string"}}, "required": ["company"]}},
 {"name": "post_journal_entry", "description": "Post a journal entry to an opened ledger.", "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}}},
 {"name": "close_books", "description": "Close the period once entries are posted.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "find_flight", "description": "Search airline flights between two airports.", "inputSchema": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}},
 {"name": "hold_seat", "description": "Reserve a seat on a found flight.", "inputSchema": {"type": "object", "properties": {"flight": {"type": "string"}}}},
 {"name": "pay_fare", "description": "Pay for a held seat with a card.", "inputSchema": {"type": "object", "properties": {"card": {"type": "string"}}}},
 {"name": "weather_now", "description": "Current weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
]}`

// TestCurve checks that the gateway learns from the runs it proxies: the test tasks' COMP@10
// rises from what text alone gives, the state folder's graph is what caskg build makes from
// its catalog and traces, the cautious agent learns only what its searches showed, and a
// second replay gives the same curve.
func TestCurve(t *testing.T) {
	dir := t.TempDir()
	catalog := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(catalog, []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs []builder.Trace
	queries := map[string]string{}
	for i := range 12 {
		id := fmt.Sprint(i)
		if i%2 == 0 {
			runs = append(runs, builder.Trace{ID: id, Skills: []string{"open_ledger", "post_journal_entry", "close_books"}})
			queries[id] = "do the month end accounting for acme"
		} else {
			runs = append(runs, builder.Trace{ID: id, Skills: []string{"find_flight", "hold_seat", "pay_fare"}})
			queries[id] = "book me a trip to lisbon"
		}
	}
	tasks := []eval.Task{
		{ID: "a", Query: "month end accounting for a company", Gold: []string{"open_ledger", "post_journal_entry", "close_books"}},
		{ID: "b", Query: "a trip by plane to rome", Gold: []string{"find_flight", "hold_seat", "pay_fare"}},
	}
	build := func(args ...string) error {
		var stderr bytes.Buffer
		if cli.Run(append([]string{"build"}, args...), io.Discard, &stderr) != 0 {
			return fmt.Errorf("caskg build: %s", strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	spec := Spec{Label: "small", Catalog: catalog, Tasks: tasks, Runs: runs, Queries: queries, LearnEvery: 4,
		Steps: []int{0, 4}, K: 3, Build: build}
	run := func(agent, name string) *Curve {
		s := spec
		s.Agent, s.Dir = agent, filepath.Join(dir, name)
		c, err := Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := run(Scripted, "a")
	if len(c.Points) != 3 || c.Points[2].Seen != 12 {
		t.Fatalf("points %+v", c.Points)
	}
	first, last := c.Points[0], c.Points[2]
	if first.Comp10 >= last.Comp10 || first.Recall10 >= last.Recall10 || last.TracesLearned != 12 || last.EdgesFromUse == 0 || last.Calls != 36 {
		t.Errorf("scripted curve %+v", c.Points)
	}
	if c.SameAsBuild == nil || !*c.SameAsBuild {
		t.Error("the gateway's graph is not what caskg build makes from its catalog and traces")
	}
	again := run(Scripted, "b")
	for i := range c.Points {
		p, q := c.Points[i], again.Points[i]
		p.Seconds, q.Seconds = 0, 0
		if p != q {
			t.Errorf("point %d: %+v, then %+v", i, p, q)
		}
	}
	cautious := run(Cautious, "c")
	if l := cautious.Points[2]; l.Calls >= last.Calls {
		t.Errorf("the cautious agent called %d tools, the scripted one %d", l.Calls, last.Calls)
	}
}
