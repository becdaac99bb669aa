// Package gatewaycurve measures how caskg learns from the calls its gateway proxies: a scripted
// agent replays a dev set's training runs through a real caskg gateway (package gateway, with
// the learning loop of package learn) in front of the test catalog server (package
// catalogserver, on streamable HTTP on 127.0.0.1): for each run, a search_tools with the run's
// task, then the run's tools called in order through call_tool. After each batch the test
// tasks are scored by COMP@10 of search_tools, so the curve is what an agent sees.
//
// Two agents: the scripted one calls every tool of a run, as a user's runs would go; the
// cautious one calls only the run's tools that its last search returned in the top k, the bias
// real agents have (they call what they were shown). At the end the state folder's graph is
// compared with what `caskg build catalog.json --traces traces.jsonl` makes.
package gatewaycurve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/gateway"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/lab/catalogserver"
)

// server is the name the catalog server has behind the gateway: its tools are "t__NAME".
const server = "t"

// Agents.
const (
	Scripted = "scripted" // calls every tool of a run
	Cautious = "cautious" // calls a run's tools only when its last search showed them
)

// Spec is one curve.
type Spec struct {
	Label   string
	Catalog string          // the dev set's tools.json, served by the catalog server
	Tasks   []eval.Task     // test tasks, scored after each batch
	Runs    []builder.Trace // training runs, replayed in file order
	// Queries are the runs' tasks by run id where the data set has them apart from the runs; a
	// run searches with its own Task, else with Queries[its id], else "replayed run ID" (the
	// graph then learns from the calls, not the words).
	Queries    map[string]string
	Agent      string // Scripted or Cautious
	LearnEvery int    // the gateway's --learn-every (default 50)
	Steps      []int  // runs replayed at each scored point (default 0, LearnEvery, 200, all)
	K          int    // search_tools k for the agent's searches and the scoring (default 10)
	Dir        string // the gateway's state folder; emptied first
	// Build runs `caskg build` with these arguments (cli.Run in process), for the final
	// comparison; nil skips it.
	Build func(args ...string) error
}

// Point is the curve after some runs.
type Point struct {
	Seen          int     `json:"seen"`   // runs replayed
	Comp10        float64 `json:"comp10"` // test tasks' COMP@K from search_tools
	Recall10      float64 `json:"recall10"`
	Calls         int     `json:"calls"` // tools called so far
	TracesLearned int     `json:"traces_learned"`
	EdgesFromUse  int     `json:"edges_from_use"`
	Edges         int     `json:"edges"`
	Seconds       float64 `json:"seconds"` // wall clock of the replay and learning since the last point
}

// Curve is one set's curve for one agent.
type Curve struct {
	Label     string  `json:"label"`
	Agent     string  `json:"agent"`
	Tools     int     `json:"tools"`
	NumTasks  int     `json:"num_tasks"`
	Runs      int     `json:"runs"`
	WithQuery int     `json:"runs_with_query"`
	Points    []Point `json:"points"`
	// SameAsBuild: the gateway's final graph.skg is byte for byte what caskg build makes from
	// its catalog.json and traces.jsonl (unset when Spec.Build is nil).
	SameAsBuild *bool `json:"same_as_build,omitempty"`
}

// Run measures one curve.
func Run(ctx context.Context, s Spec) (*Curve, error) {
	if s.Dir == "" || len(s.Runs) == 0 || s.Catalog == "" {
		return nil, errors.New("gatewaycurve: Catalog, Dir and Runs are required")
	}
	if s.Agent == "" {
		s.Agent = Scripted
	}
	if s.LearnEvery == 0 {
		s.LearnEvery = 50
	}
	if s.K == 0 {
		s.K = 10
	}
	if s.Steps == nil {
		s.Steps = []int{0, s.LearnEvery, 200}
	}
	cat, err := catalogserver.Load(s.Catalog)
	if err != nil {
		return nil, err
	}
	schemas := map[string]any{}
	for _, t := range cat.Tools {
		schemas[t.Name] = t.InputSchema
	}
	down, err := serveCatalog(cat)
	if err != nil {
		return nil, err
	}
	defer down.Close()

	if err := os.RemoveAll(s.Dir); err != nil {
		return nil, err
	}
	loop, err := learn.Open(s.Dir, learn.Options{LearnEvery: s.LearnEvery, LearnAfterQuiet: learn.DefaultLearnAfterQuiet})
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			loop.Close(context.Background())
		}
	}()
	cfg, _, err := gateway.ParseConfig("gatewaycurve.json", fmt.Appendf(nil, `{"mcpServers": {%q: {"url": %q}}}`, server, down.URL+"/mcp"), gateway.ConfigOptions{})
	if err != nil {
		return nil, err
	}
	// The replay records a data set's runs as fast as it can: no trace rate.
	g, err := gateway.New(cfg, gateway.Options{Learner: loop, Version: "gatewaycurve", TraceRate: -1})
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := g.WaitSettled(ctx); err != nil {
		return nil, err
	}
	if err := loop.Wait(ctx); err != nil {
		return nil, err
	}

	c := &Curve{Label: s.Label, Agent: s.Agent, Tools: len(cat.Tools), NumTasks: len(s.Tasks), Runs: len(s.Runs)}
	for _, r := range s.Runs {
		if query(s, r) != "" {
			c.WithQuery++
		}
	}
	var at []int
	for _, n := range s.Steps {
		if n >= 0 && n < len(s.Runs) && !slices.Contains(at, n) {
			at = append(at, n)
		}
	}
	slices.Sort(at)
	at = append(at, len(s.Runs))

	seen, calls, traces := 0, 0, 0
	for _, n := range at {
		start := time.Now()
		if n > seen {
			// One agent session a batch: its last trace is recorded when the session ends.
			sess, err := connect(ctx, g)
			if err != nil {
				return nil, err
			}
			for ; seen < n; seen++ {
				k, err := replay(ctx, sess, s, s.Runs[seen], schemas)
				if err != nil {
					sess.Close()
					return nil, fmt.Errorf("gatewaycurve: %s run %s: %w", s.Label, s.Runs[seen].ID, err)
				}
				calls += k
				if k > 0 {
					traces++ // a search with no calls records nothing
				}
			}
			if err := sess.Close(); err != nil {
				return nil, err
			}
			// A point is scored after a quiet spell: what the gateway does by itself after
			// --learn-idle, it does here at once.
			if err := settle(ctx, loop, traces); err != nil {
				return nil, err
			}
		}
		p, err := score(ctx, g, s)
		if err != nil {
			return nil, err
		}
		st := loop.Status()
		if st.LastError != "" {
			return nil, fmt.Errorf("gatewaycurve: %s: the learning loop failed: %s", s.Label, st.LastError)
		}
		p.Seen, p.Calls, p.TracesLearned, p.EdgesFromUse, p.Edges = seen, calls, st.TracesLearned, st.EdgesFromUse, st.Edges
		p.Seconds = time.Since(start).Seconds()
		c.Points = append(c.Points, p)
	}

	g.Close()
	if err := loop.Close(ctx); err != nil {
		return nil, err
	}
	closed = true
	if s.Build != nil {
		same, err := sameAsBuild(s.Dir, s.Build)
		if err != nil {
			return nil, err
		}
		c.SameAsBuild = &same
	}
	return c, nil
}

// settle waits until the loop has recorded the traces the replay made (the session's last one
// reaches it when the gateway sees the session end), then learns them all and waits for the
// graph.
func settle(ctx context.Context, loop *learn.Loop, traces int) error {
	deadline := time.Now().Add(time.Minute)
	for loop.Status().TracesRecorded < traces {
		if time.Now().After(deadline) {
			return fmt.Errorf("gatewaycurve: %d of %d traces recorded after a minute", loop.Status().TracesRecorded, traces)
		}
		time.Sleep(time.Millisecond)
	}
	if err := loop.Wait(ctx); err != nil {
		return err
	}
	loop.LearnNow()
	return loop.Wait(ctx)
}

// query is what run asks, as an agent searches: its task, else the spec's query for its id; ""
// when neither is known.
func query(s Spec, run builder.Trace) string {
	if run.Task != "" {
		return run.Task
	}
	return s.Queries[run.ID]
}

// replay plays one run: a search with its task (query), then its tools through call_tool (all
// of them, or for the cautious agent those the search showed). It returns the number of calls.
func replay(ctx context.Context, sess *mcp.ClientSession, s Spec, run builder.Trace, schemas map[string]any) (int, error) {
	q := query(s, run)
	if q == "" {
		q = "replayed run " + run.ID
	}
	shown, err := search(ctx, sess, q, s.K)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, tool := range run.Skills {
		name := server + "__" + tool
		if s.Agent == Cautious && !slices.Contains(shown, name) {
			continue
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": name, "arguments": catalogserver.ExampleArgs(schemas[tool])}})
		if err != nil {
			return n, fmt.Errorf("call_tool %s: %w", name, err)
		}
		if res.IsError {
			return n, fmt.Errorf("call_tool %s: %s", name, text(res))
		}
		n++
	}
	return n, nil
}

// score is the test tasks' COMP@K and Recall@K from search_tools.
func score(ctx context.Context, g *gateway.Gateway, s Spec) (Point, error) {
	sess, err := connect(ctx, g)
	if err != nil {
		return Point{}, err
	}
	defer sess.Close()
	var p Point
	for _, t := range s.Tasks {
		names, err := search(ctx, sess, t.Query, s.K)
		if err != nil {
			return p, fmt.Errorf("gatewaycurve: %s task %s: %w", s.Label, t.ID, err)
		}
		hit := 0
		for _, gold := range t.Gold {
			if slices.Contains(names, server+"__"+gold) {
				hit++
			}
		}
		if hit == len(t.Gold) {
			p.Comp10++
		}
		p.Recall10 += float64(hit) / float64(len(t.Gold))
	}
	if len(s.Tasks) > 0 {
		p.Comp10 /= float64(len(s.Tasks))
		p.Recall10 /= float64(len(s.Tasks))
	}
	return p, nil
}

// search calls search_tools and returns the tools' names, best first.
func search(ctx context.Context, sess *mcp.ClientSession, query string, k int) ([]string, error) {
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": query, "k": k}})
	if err != nil {
		return nil, fmt.Errorf("search_tools: %w", err)
	}
	if res.IsError {
		return nil, fmt.Errorf("search_tools: %s", text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var out struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("search_tools: structured content: %w", err)
	}
	names := make([]string, len(out.Tools))
	for i, t := range out.Tools {
		names[i] = t.Name
	}
	return names, nil
}

func connect(ctx context.Context, g *gateway.Gateway) (*mcp.ClientSession, error) {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Connect(ctx, st); err != nil {
		return nil, err
	}
	return mcp.NewClient(&mcp.Implementation{Name: "gatewaycurve-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
}

func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "(no text)"
}

// serveCatalog serves the catalog on streamable HTTP on 127.0.0.1, as a real downstream.
func serveCatalog(cat *catalogserver.Catalog) (*downstream, error) {
	srv, err := catalogserver.NewServer(cat, catalogserver.Options{})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &downstream{hs: hs, URL: "http://" + ln.Addr().String()}, nil
}

type downstream struct {
	hs  *http.Server
	URL string
}

func (d *downstream) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := d.hs.Shutdown(ctx); err != nil {
		return d.hs.Close()
	}
	return nil
}

// sameAsBuild builds the state folder's catalog and traces with caskg build and compares the
// bytes with the folder's graph.
func sameAsBuild(dir string, build func(args ...string) error) (bool, error) {
	got, err := os.ReadFile(filepath.Join(dir, learn.GraphFile))
	if err != nil {
		return false, err
	}
	out := filepath.Join(dir, "rebuilt.skg.tmp")
	defer os.Remove(out)
	if err := build(filepath.Join(dir, learn.CatalogFile), "--traces", filepath.Join(dir, learn.TracesFile), "--quiet", "-o", out); err != nil {
		return false, err
	}
	want, err := os.ReadFile(out)
	if err != nil {
		return false, err
	}
	return string(got) == string(want), nil
}

// WriteMarkdown writes the curves as a table a set and agent, with the plot image's path.
func WriteMarkdown(w io.Writer, curves []*Curve, image string) {
	fmt.Fprintln(w, "Learning through the gateway (`make eval`, native/lab/internal/gatewaycurve): a scripted agent replays each")
	fmt.Fprintln(w, "set's training runs through `caskg gateway --learn-every 50` in front of the test catalog server")
	fmt.Fprintln(w, "(native/internal/lab/catalogserver, streamable HTTP on 127.0.0.1): a `search_tools` with the run's task, then the")
	fmt.Fprintln(w, "run's tools through `call_tool` with arguments made from their schemas. After each batch, and a quiet")
	fmt.Fprintln(w, "spell (what `--learn-idle` does), the test tasks are scored by COMP@10 of `search_tools`. The")
	fmt.Fprintln(w, "cautious agent calls a run's tool only when its last search showed it in the top 10, the bias real")
	fmt.Fprintln(w, "agents have. Every run searches with its own task (the trace's \"task\"), as agents do; the gateway")
	fmt.Fprintln(w, "keeps it with the run, so what it learns includes the memory of past tasks.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| set | agent | runs seen | COMP@10 | R@10 | calls | traces learned | edges from use | graph.skg = caskg build |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, c := range curves {
		same := "—"
		if c.SameAsBuild != nil {
			same = map[bool]string{true: "yes", false: "**no**"}[*c.SameAsBuild]
		}
		for i, p := range c.Points {
			s := ""
			if i == len(c.Points)-1 {
				s = same
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %d | %d | %d | %s |\n", c.Label, c.Agent, p.Seen, p.Comp10, p.Recall10, p.Calls, p.TracesLearned, p.EdgesFromUse, s)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "![COMP@10 of search_tools against the runs replayed through the gateway](%s)\n", image)
}
