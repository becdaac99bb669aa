package mcpcore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// The tools' arguments and results as Go types, and Core, which runs the tools on them. Both
// servers decode a call into the argument type, run Core and encode the result it returns:
// native/internal/mcpserver with the Go SDK (encoding/json, checked against the output schemas), the
// worker's Handler by hand (encode.go), since the worker links no encoding/json. A field is
// declared here once; the output schemas (outputs.go) are held to these types by a test.

// RetrieveArgs are retrieve_skills' arguments.
type RetrieveArgs struct {
	Query       string  `json:"query"`
	K           int     `json:"k,omitempty"`
	Render      *bool   `json:"render,omitempty"`
	SkillBudget int     `json:"skill_budget,omitempty"`
	TotalBudget int     `json:"total_budget,omitempty"`
	NoGraph     bool    `json:"no_graph,omitempty"`
	NoMemory    bool    `json:"no_memory,omitempty"`
	MinScore    float64 `json:"min_score,omitempty"`
	// The filter (engine.Filter), flat: an agent passes lists, not an object.
	Allow      []string `json:"allow,omitempty"`
	Deny       []string `json:"deny,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// NameArgs are get_skill's argument.
type NameArgs struct {
	Name string `json:"name"`
}

// NeighborsArgs are skill_neighbors' arguments.
type NeighborsArgs struct {
	Name  string `json:"name"`
	Limit int    `json:"limit,omitempty"`
}

// ReportArgs are report_skill_use's arguments.
type ReportArgs struct {
	Query   string   `json:"query"`
	Used    []string `json:"used"`
	Outcome string   `json:"outcome,omitempty"`
}

// RetrieveOutput is retrieve_skills' structured result.
type RetrieveOutput struct {
	Query   string  `json:"query"`
	Results []Skill `json:"results"`
	Match   float64 `json:"match"`          // engine.Response.Match
	Note    string  `json:"note,omitempty"` // engine.Response.Note
}

// Skill is one ranked skill.
type Skill struct {
	Rank        int          `json:"rank"`
	Name        string       `json:"name"`
	Score       float64      `json:"score"`
	Match       float64      `json:"match"` // engine.Result.Match
	SeedRank    int          `json:"seed_rank,omitempty"`
	Graph       bool         `json:"graph,omitempty"`
	Description string       `json:"description"`
	Source      string       `json:"source"`
	Via         []engine.Via `json:"via,omitempty"`
	// Recalled is set when the memory of past tasks raised the skill (engine.Result.Recalled).
	Recalled *engine.Recall `json:"recalled,omitempty"`
}

// SkillText is get_skill's structured result.
type SkillText struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Complete bool   `json:"complete"`
	Text     string `json:"text"`
	Note     string `json:"note,omitempty"`
}

// NeighborsOutput is skill_neighbors' structured result.
type NeighborsOutput struct {
	Name     string `json:"name"`
	Out      []Edge `json:"out"`
	In       []Edge `json:"in"`
	OutTotal int    `json:"out_total"`
	InTotal  int    `json:"in_total"`
}

// FeedbackOutput is report_skill_use's structured result.
type FeedbackOutput struct {
	Recorded int    `json:"recorded"`
	Outcome  string `json:"outcome,omitempty"`
}

// Info is graph_info's structured result.
type Info struct {
	Artifact string `json:"artifact,omitempty"`
	Counts
	VectorDim    int    `json:"vector_dim,omitempty"`
	VectorModel  string `json:"vector_model,omitempty"`
	QueryEncoder bool   `json:"query_encoder"`
	// Params are the build parameters, the artifact's JSON object; Core leaves them nil and
	// each server writes g.Params() as its encoder can (an unreadable object is said so).
	Params      map[string]any  `json:"params"`
	Library     *LibraryInfo    `json:"library,omitempty"`
	Learning    engine.Learning `json:"learning"`
	MemoryBytes int             `json:"memory_bytes,omitempty"` // of the memory of past tasks' sections; its counts are in params.memory
}

// Counts are what graph_info and caskg inspect --json both say of an artifact, in this order.
type Counts struct {
	Version string         `json:"version"` // the format's, "major.minor"
	Bytes   int            `json:"bytes"`
	Skills  int            `json:"skills"`
	Edges   int            `json:"edges"`
	Terms   int            `json:"terms"`
	ByState map[string]int `json:"by_state"`
	ByType  map[string]int `json:"by_type"`
}

// CountsOf counts g.
func CountsOf(g *graphs.Graph) Counts {
	maj, mnr := g.Version()
	c := Counts{Version: strconv.Itoa(maj) + "." + strconv.Itoa(mnr), Bytes: g.Size(),
		Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms()}
	c.ByState, c.ByType = edgeCounts(g)
	return c
}

// LibraryInfo describes the library folder a server reads whole SKILL.md files from.
type LibraryInfo struct {
	Dir      string `json:"dir"`
	Skills   int    `json:"skills"`
	Served   int    `json:"served"`
	Problems int    `json:"problems"`
}

// Core runs the tools over one engine, whatever the transport. It is safe for concurrent use.
type Core struct {
	eng   *engine.Engine
	g     *graphs.Graph
	names *service.Names
	in    [][]int // published edges into each skill
}

// NewCore prepares the tools over eng's graph.
func NewCore(eng *engine.Engine) *Core {
	g := eng.Graph()
	c := &Core{eng: eng, g: g, names: service.NewNames(eng), in: make([][]int, g.NumSkills())}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			c.in[g.Target(e)] = append(c.in[g.Target(e)], e)
		}
	}
	return c
}

// Names finds skills by name for the tools.
func (c *Core) Names() *service.Names { return c.names }

// Retrieve runs retrieve_skills: its text and its structured result. given names the
// arguments the call set explicitly, so that an explicit k of 0 is refused, not the default.
func (c *Core) Retrieve(a RetrieveArgs, given ...string) (string, *RetrieveOutput, error) {
	render := a.Render == nil || *a.Render
	req := engine.Request{Query: a.Query, K: a.K, NoGraph: a.NoGraph, NoMemory: a.NoMemory, MinScore: a.MinScore, Render: render,
		SkillBudget: a.SkillBudget, TotalBudget: a.TotalBudget,
		Filter: engine.Filter{Allow: a.Allow, Deny: a.Deny, Namespaces: a.Namespaces}}
	if err := service.Service.Check(req, given...); err != nil {
		return "", nil, ArgError(err)
	}
	resp, err := c.eng.Query(req)
	if err != nil {
		return "", nil, ArgError(err)
	}
	out := &RetrieveOutput{Query: a.Query, Results: make([]Skill, len(resp.Results)), Match: resp.Match, Note: resp.Note}
	for i, r := range resp.Results {
		out.Results[i] = Skill{Rank: i + 1, Name: r.Name, Score: r.Score, Match: r.Match, SeedRank: r.SeedRank, Graph: r.Graph,
			Description: c.g.Description(r.ID), Source: c.g.Source(r.ID), Via: r.Via, Recalled: r.Recalled}
	}
	if !render {
		return listText(out.Results, resp.Note), out, nil
	}
	return resp.Rendered, out, nil
}

// Head is get_skill's answer from the graph alone, for skill id: why says why it is not the
// whole file. It returns the full text content and the structured result.
func (c *Core) Head(id int, why string) (string, *SkillText) {
	note := headNote(c.g.Source(id), why)
	text, full := headText(c.g.Name(id), c.g.Description(id), c.g.Body(id), note)
	return full, &SkillText{Name: c.g.Name(id), Source: c.g.Source(id), Text: text, Note: note}
}

// Neighbors runs skill_neighbors.
func (c *Core) Neighbors(a NeighborsArgs) (string, *NeighborsOutput, error) {
	limit, err := neighborsLimit(a.Limit)
	if err != nil {
		return "", nil, err
	}
	id, err := c.names.Lookup(a.Name)
	if err != nil {
		return "", nil, err
	}
	out := &NeighborsOutput{Name: c.g.Name(id)}
	out.Out, out.In = edgesOf(c.g, id, c.in[id])
	out.OutTotal, out.InTotal = len(out.Out), len(out.In)
	out.Out, out.In = out.Out[:min(limit, len(out.Out))], out.In[:min(limit, len(out.In))]
	return neighborsText(out.Name, out.Out, out.In, out.OutTotal, out.InTotal), out, nil
}

// Info is graph_info's result but for Params: artifact names the artifact file, lib the
// library folder (nil without one).
func (c *Core) Info(artifact string, lib *LibraryInfo) *Info {
	g := c.g
	return &Info{Artifact: artifact, Counts: CountsOf(g), VectorDim: g.VectorDim(), VectorModel: g.VectorModel(),
		QueryEncoder: g.HasEncoder(), Library: lib, Learning: engine.LearningOf(g), MemoryBytes: MemoryBytes(g)}
}

// Report runs report_skill_use: it checks a as POST /v1/feedback does and appends it to store
// as a report from source. The transport has answered FeedbackOff already when it has no store,
// and NotRecorded when it refused the reporter.
func (c *Core) Report(ctx context.Context, store service.FeedbackStore, a ReportArgs, source string) (string, *FeedbackOutput, error) {
	fb := service.Feedback{Query: a.Query, Used: a.Used, Outcome: a.Outcome, Source: source}
	if err := checkFeedback(c.names, c.g, &fb); err != nil {
		return "", nil, err
	}
	if err := store.Append(ctx, fb); err != nil {
		var rl *service.RateLimitError
		if errors.As(err, &rl) {
			return "", nil, rl
		}
		return "", nil, errors.New(notStored + err.Error())
	}
	return recordedText(len(fb.Used), fb.Outcome), &FeedbackOutput{Recorded: len(fb.Used), Outcome: fb.Outcome}, nil
}

// edgeCounts counts g's published edges by calibration state and by relation, every state and
// relation present (0 where no edge has it): graph_info's by_state and by_type, and caskg
// inspect's.
func edgeCounts(g *graphs.Graph) (byState, byType map[string]int) {
	byState, byType = map[string]int{}, map[string]int{}
	for _, st := range graphs.States() {
		byState[st.String()] = 0
	}
	for _, r := range graphs.Relations() {
		byType[r.String()] = 0
	}
	for e := range g.NumEdges() {
		byState[g.State(e).String()]++
		byType[g.Type(e).String()]++
	}
	return byState, byType
}

// edgesOf lists skill id's published edges out and in (ins, the edges into it), each
// strongest first, then by name. An edge u→v means u comes first; from u's side the edge is
// walked in reverse (see engine.Via), from v's side forward.
func edgesOf(g *graphs.Graph, id int, ins []int) (out, in []Edge) {
	edge := func(e, other int, reverse bool) Edge {
		v := engine.Via{From: g.Name(other), State: g.State(e).String(), Weight: g.Weight(e),
			Type: g.Type(e).String(), Reverse: reverse}
		return Edge{Skill: v.From, State: v.State, Type: v.Type, Weight: v.Weight,
			Assoc: g.Assoc(e), Evidence: v.Evidence()}
	}
	out, in = []Edge{}, []Edge{}
	lo, hi := g.Out(id)
	for e := lo; e < hi; e++ {
		out = append(out, edge(e, g.Target(e), true))
	}
	n := g.NumSkills()
	for _, e := range ins {
		// The source is the first skill whose edges end past e (edges are stored by source).
		src, top := 0, n
		for src < top {
			if mid := int(uint(src+top) >> 1); func() bool { _, hi := g.Out(mid); return hi > e }() {
				top = mid
			} else {
				src = mid + 1
			}
		}
		in = append(in, edge(e, src, false))
	}
	for _, es := range [][]Edge{out, in} {
		slices.SortStableFunc(es, func(a, b Edge) int {
			if a.Weight != b.Weight {
				return cmp.Compare(b.Weight, a.Weight)
			}
			return strings.Compare(a.Skill, b.Skill)
		})
	}
	return out, in
}

// MemoryBytes is the size of g's memory of past tasks, the bytes of its sections (its terms'
// text is in the string heap with the other strings); 0 without one. graph_info's memory_bytes
// and caskg inspect's.
func MemoryBytes(g *graphs.Graph) int {
	n := 0
	for _, s := range g.Sections() {
		if graphs.IsMemorySection(s.Tag) {
			n += s.Length
		}
	}
	return n
}

func sortedNames[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	slices.Sort(out)
	return out
}

// ArgError rewords an engine or limit (wasm/service) error for a tool's caller: without the
// package prefix, naming the filter's lists as the arguments they are ("allow[2]"). The
// gateway's search_tools words its errors with it too.
func ArgError(err error) error {
	if errors.Is(err, engine.ErrEmptyQuery) {
		return errors.New(`field "query": empty`)
	}
	msg := strings.TrimPrefix(err.Error(), "engine: ")
	msg = strings.TrimPrefix(msg, "service: ")
	// retrieve_skills takes the filter's lists as arguments of their own.
	return errors.New(strings.Replace(msg, `field "filter.`, `field "`, 1))
}

// neighborsLimit is skill_neighbors' limit argument checked, 0 meaning the default.
func neighborsLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return defaultNeighbors, nil
	case limit < 1 || limit > maxNeighbors:
		return 0, errors.New(`field "limit": ` + strconv.Itoa(limit) + " is outside [1, " + strconv.Itoa(maxNeighbors) + "]")
	}
	return limit, nil
}

// What report_skill_use answers when it keeps nothing: feedback off, a reporter refused (then
// the reason), a store that failed (then its error).
const (
	FeedbackOff = "feedback is off on this server: nothing was recorded"
	NotRecorded = "nothing was recorded: "
	notStored   = "feedback not recorded: "
)

// checkFeedback checks a report_skill_use report as POST /v1/feedback checks it
// (service.CheckFeedback), after naming each used skill as the graph does when the name resolves.
func checkFeedback(n *service.Names, g *graphs.Graph, fb *service.Feedback) error {
	for i, name := range fb.Used {
		if id, ok := n.Resolve(name); ok {
			fb.Used[i] = g.Name(id)
		}
	}
	if err := service.CheckFeedback(*fb, func(name string) bool { _, ok := n.Exact(name); return ok }); err != nil {
		return ArgError(err)
	}
	return nil
}
