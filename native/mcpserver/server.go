// Package mcpserver serves a caskg skill graph to agents over the Model Context Protocol, with
// the official Go SDK. It is transport-agnostic: `caskg mcp` runs it over stdio (Transport) or
// streamable HTTP (HTTPHandler, ServeHTTP, which the gateway shares), tests over an in-memory
// pipe.
//
// Tools (all read-only but report_skill_use):
//   - retrieve_skills: the ranked bundle for a task — the engine's rendered text (header, each
//     skill's description, source, graph evidence and body head within a character budget) as
//     text content, the ranking with scores and evidence as structured content;
//   - get_skill: one skill's full SKILL.md, read fresh from the library folder when the server
//     has one and the file is among those the library load found; otherwise the artifact's
//     description and body head, marked as a head;
//   - skill_neighbors: the published edges into and out of a skill, with states, weights and
//     relation types;
//   - graph_info: counts, format version, build parameters, vectors and library coverage;
//   - report_skill_use: feedback, the skills an agent used for a task and whether it worked,
//     validated as POST /v1/feedback validates it (api.CheckFeedback) and appended to
//     Options.Feedback (caskg mcp --feedback FILE) with its reporter (Options.Reporters:
//     over HTTP a bearer token beyond loopback); without a store it answers that feedback is
//     off.
//
// Bad arguments give tool results with isError set and a message naming the field and the rule
// it breaks, repeating at most a short prefix of the value; an unknown skill name gives the
// closest names. Transport carries the server over stdio and answers malformed JSON-RPC lines
// itself instead of ending the session. retrieve_skills holds its query and k to the limits every
// caskg surface shares (the table in wasm/api). No argument reaches the file system: get_skill
// maps a name to a file found by the library load, and opens it through an os.Root of the
// library folder, so neither "..", absolute paths nor symlinks lead outside it.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// Limits on arguments.
const (
	MaxNameBytes     = 512  // of a skill name argument
	DefaultNeighbors = 50   // edges listed per direction by skill_neighbors
	MaxNeighbors     = 1000 // most edges per direction skill_neighbors lists
	maxSuggestions   = 5    // closest names offered for an unknown one
)

// Options configure a Server.
type Options struct {
	// Library is a folder of SKILL.md files, normally the one the artifact was built from.
	// When set, get_skill serves a skill's whole SKILL.md from it.
	Library string
	// Artifact names the artifact file in graph_info.
	Artifact string
	// Version is the server version reported to clients.
	Version string
	// Feedback keeps what report_skill_use reports; nil: the tool answers that feedback is off.
	Feedback api.FeedbackStore
	// Reporters decide who may call report_skill_use over HTTP, and name each report's source:
	// api.FeedbackAuth.Check with the call's Authorization header. A call that came with no
	// HTTP request (stdio, an in-memory pipe) is from StdioSource: only the process that
	// started the server speaks on its stdio.
	Reporters api.FeedbackAuth
}

// StdioSource is the source of reports that came over stdio: one reporter, whichever agent.
const StdioSource = "mcp:stdio"

// Server answers the tools over one graph. It is safe for concurrent use.
type Server struct {
	g      *graphs.Graph
	eng    *engine.Engine
	opt    Options
	byName map[string]int   // exact skill name → id
	byNorm map[string][]int // normalized name → ids
	norms  []string         // normalized name per id
	in     [][]int          // published edges into each skill

	root     *os.Root          // the library folder; nil without one
	files    map[string]string // skill name → its SKILL.md relative to root
	libInfo  *LibraryInfo
	problems []ingest.Problem
}

// LibraryInfo describes the library folder of a Server.
type LibraryInfo struct {
	Dir      string `json:"dir" jsonschema:"the library folder"`
	Skills   int    `json:"skills" jsonschema:"SKILL.md skills the library load found"`
	Served   int    `json:"served" jsonschema:"skills of the graph whose whole SKILL.md get_skill serves"`
	Problems int    `json:"problems" jsonschema:"bad entries the library load skipped"`
}

// New prepares a server over g. With opt.Library it loads the library to learn which SKILL.md
// file belongs to which skill; bad entries in it are skipped (Problems lists them), but a
// folder that cannot be read or holds no skill is an error.
func New(g *graphs.Graph, opt Options) (*Server, error) {
	s := &Server{g: g, eng: engine.New(g), opt: opt, byName: map[string]int{}, byNorm: map[string][]int{}}
	n := g.NumSkills()
	s.norms = make([]string, n)
	for i := range n {
		s.byName[g.Name(i)] = i
		s.norms[i] = normName(g.Name(i))
		s.byNorm[s.norms[i]] = append(s.byNorm[s.norms[i]], i)
	}
	s.in = make([][]int, n)
	for u := range n {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			s.in[g.Target(e)] = append(s.in[g.Target(e)], e)
		}
	}
	if opt.Library != "" {
		if err := s.loadLibrary(opt.Library); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) loadLibrary(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("mcpserver: library: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mcpserver: library %s is not a folder", dir)
	}
	lib, err := ingest.Load(dir)
	if err != nil {
		return fmt.Errorf("mcpserver: library: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("mcpserver: library: %w", err)
	}
	s.root, s.files, s.problems = root, map[string]string{}, lib.Problems
	s.libInfo = &LibraryInfo{Dir: dir, Problems: len(lib.Problems)}
	base := filepath.Clean(dir)
	for _, sk := range lib.Skills {
		if sk.Kind != ingest.KindSkill {
			continue
		}
		s.libInfo.Skills++
		rel, err := filepath.Rel(base, filepath.FromSlash(sk.Path))
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		if _, ok := s.byName[sk.Name]; ok {
			s.files[sk.Name] = rel
		}
	}
	s.libInfo.Served = len(s.files)
	return nil
}

// Close releases the library folder.
func (s *Server) Close() error {
	if s.root != nil {
		return s.root.Close()
	}
	return nil
}

// Library describes the library folder; nil without one.
func (s *Server) Library() *LibraryInfo { return s.libInfo }

// Problems are the bad entries the library load skipped.
func (s *Server) Problems() []ingest.Problem { return s.problems }

// Instructions tell a client's model what the server is for.
const Instructions = `caskg retrieves skills (procedures written as SKILL.md files) for a task from a skill graph. ` +
	`Before acting on a task, call retrieve_skills with the task in plain words: it returns the most relevant skills ` +
	`with their prerequisites and follow-ups found over the graph, and their text. Follow the steps of the skills it returns. ` +
	`Call get_skill for a skill's whole text when its text in the bundle was cut, skill_neighbors to see what a skill ` +
	`needs or enables, graph_info for what the graph holds.`

// MCP returns an MCP server with the tools registered. Each call returns a new one.
func (s *Server) MCP() *mcp.Server {
	version := s.opt.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "caskg", Title: "caskg skill graph", Version: version},
		&mcp.ServerOptions{Instructions: Instructions})
	specs := map[string]*argSpec{}
	addTool(srv, specs, "retrieve_skills", "Retrieve skills for a task",
		"Find the skills to use for a task: the best matches and, over the skill graph, the skills they need "+
			"or lead to. Returns the bundle as text (a header, then each skill's description, source file, graph evidence "+
			"and the head of its instructions, within a character budget) and the ranking as structured content.",
		retrieveSchema, s.retrieve)
	addTool(srv, specs, "get_skill", "Get a skill's text",
		"The whole SKILL.md of a skill by name, read from the skill library; when the server has no library "+
			"or no file for the skill, the description and the head of the body stored in the graph.",
		nameSchema, s.getSkill)
	addTool(srv, specs, "skill_neighbors", "Skill neighbors",
		"The published graph edges into and out of a skill: which skills it needs, which need it, which "+
			"follow it and which are similar or alternatives, with each edge's calibration state, weight and type.",
		neighborsSchema, s.neighbors)
	addTool(srv, specs, "graph_info", "Skill graph info",
		"What the skill graph holds: skill, edge and term counts, edges by state and relation, format version, build parameters, vectors and the library folder.",
		`{"type": "object", "additionalProperties": false}`, s.info)
	addToolAnnotated(srv, specs, "report_skill_use", "Report skills used",
		"After a task, report which of the retrieved skills you actually used, in the order you used them, and "+
			"whether the task succeeded. The reports are kept as usage traces the skill graph is rebuilt from; "+
			"the server may have feedback off, and then says so.",
		feedbackSchema, s.reportUse, &mcp.ToolAnnotations{Title: "Report skills used", OpenWorldHint: new(false)})
	srv.AddReceivingMiddleware(checkArgs(specs))
	return srv
}

// addTool registers a tool under its name and title, read-only, idempotent and closed-world (it
// reads the graph and the library, nothing else), with h behind safe, and records in specs what
// its schema allows for checkArgs.
func addTool[In, Out any](srv *mcp.Server, specs map[string]*argSpec, name, title, description, schema string, h mcp.ToolHandlerFor[In, Out]) {
	addToolAnnotated(srv, specs, name, title, description, schema, h,
		&mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)})
}

// addToolAnnotated is addTool with the tool's annotations given.
func addToolAnnotated[In, Out any](srv *mcp.Server, specs map[string]*argSpec, name, title, description, schema string, h mcp.ToolHandlerFor[In, Out], ann *mcp.ToolAnnotations) {
	specs[name] = parseSpec(schema)
	mcp.AddTool(srv, &mcp.Tool{
		Name: name, Title: title, Description: description, InputSchema: json.RawMessage(schema), Annotations: ann,
	}, safe(h))
}

// Run serves one session over t until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.MCP().Run(ctx, t)
}

// safe turns a panic in a tool handler into a tool error, so no argument crashes the server.
// The panic's text stays out of the message: it speaks of Go, not of the call.
func safe[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				var zero Out
				res, out, err = nil, zero, errors.New("internal error: the tool failed on these arguments (a bug in caskg); the server goes on")
			}
		}()
		return h(ctx, req, in)
	}
}

// retrieveSchema is retrieve_skills' input schema, written out so that clients see the limits
// the handler enforces: the query's length and k are those every surface shares (wasm/api).
// JSON Schema counts a string's characters, so maxLength admits some text longer than
// api.MaxQueryBytes bytes; the handler refuses it, naming the field.
var retrieveSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(api.MaxQueryBytes) + `, "description": "the task, in plain words (at most ` + strconv.Itoa(api.MaxQueryBytes) + ` bytes of UTF-8)"},
    "k": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(api.MaxK) + `, "description": "how many skills to return (default 8)"},
    "render": {"type": "boolean", "description": "return the skills' text as the text content (default true); false gives a short list"},
    "skill_budget": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "characters of text per skill (default 2400)"},
    "total_budget": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "characters of text in all (default 12000)"},
    "no_graph": {"type": "boolean", "description": "rank by the task's words alone, without the graph"},
    "allow": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(api.MaxPatternBytes) + `}, "maxItems": ` + strconv.Itoa(api.MaxFilterPatterns) + `, "description": "return only skills whose name matches one of these globs ('*' any run of characters, '?' one character)"},
    "deny": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(api.MaxPatternBytes) + `}, "maxItems": ` + strconv.Itoa(api.MaxFilterPatterns) + `, "description": "never return skills whose name matches one of these globs (wins over allow)"},
    "namespaces": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(api.MaxPatternBytes) + `}, "maxItems": ` + strconv.Itoa(api.MaxFilterPatterns) + `, "description": "return only skills of these namespaces: the part of a name before its first \"__\" (SERVER__TOOL)"}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// Input schemas of the other tools.
const (
	nameSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the skill's name, as retrieve_skills gives it"}
  },
  "required": ["name"],
  "additionalProperties": false
}`
	neighborsSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the skill's name, as retrieve_skills gives it"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "most edges to list each way, strongest first (default 50)"}
  },
  "required": ["name"],
  "additionalProperties": false
}`
)

// feedbackSchema is report_skill_use's input schema: the body of POST /v1/feedback, with its
// limits (wasm/api).
var feedbackSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": ` + strconv.Itoa(api.MaxQueryBytes) + `, "description": "the task the skills were retrieved for"},
    "used": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": ` + strconv.Itoa(api.MaxUsed) + `, "description": "the skills used, by name as retrieve_skills gave them, in the order used"},
    "outcome": {"type": "string", "enum": ["success", "failure"], "description": "whether the task succeeded (optional)"}
  },
  "required": ["query", "used"],
  "additionalProperties": false
}`

// FeedbackInput are report_skill_use's arguments.
type FeedbackInput struct {
	Query   string   `json:"query"`
	Used    []string `json:"used"`
	Outcome string   `json:"outcome,omitempty"`
}

// FeedbackOutput is report_skill_use's structured result.
type FeedbackOutput struct {
	Recorded int    `json:"recorded" jsonschema:"how many skill uses were recorded"`
	Outcome  string `json:"outcome,omitempty" jsonschema:"the outcome recorded, if given"`
}

// reportUse checks a report as the HTTP API does and hands it to the store.
func (s *Server) reportUse(ctx context.Context, req *mcp.CallToolRequest, in FeedbackInput) (*mcp.CallToolResult, *FeedbackOutput, error) {
	if s.opt.Feedback == nil {
		return nil, nil, errors.New("feedback is off on this server: nothing was recorded (start caskg mcp with --feedback FILE to record reports)")
	}
	source := StdioSource
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		var err error
		if source, err = s.opt.Reporters.Check(req.Extra.Header.Get("Authorization")); err != nil {
			return nil, nil, fmt.Errorf("nothing was recorded: %w", err)
		}
	}
	fb := api.Feedback{Query: in.Query, Used: in.Used, Outcome: in.Outcome, Source: source}
	if err := api.CheckFeedback(fb, func(name string) bool { _, ok := s.byName[name]; return ok }); err != nil {
		return nil, nil, argError(err)
	}
	if err := s.opt.Feedback.Append(ctx, fb); err != nil {
		var rl *api.RateLimitError
		if errors.As(err, &rl) {
			return nil, nil, rl
		}
		return nil, nil, fmt.Errorf("feedback not recorded: %w", err)
	}
	msg := fmt.Sprintf("Recorded: %d skills used", len(fb.Used))
	if fb.Outcome != "" {
		msg += ", " + fb.Outcome
	}
	return textResult(msg + ".\n"), &FeedbackOutput{Recorded: len(fb.Used), Outcome: fb.Outcome}, nil
}

// RetrieveInput are retrieve_skills' arguments.
type RetrieveInput struct {
	Query       string `json:"query"`
	K           int    `json:"k,omitempty"`
	Render      *bool  `json:"render,omitempty"`
	SkillBudget int    `json:"skill_budget,omitempty"`
	TotalBudget int    `json:"total_budget,omitempty"`
	NoGraph     bool   `json:"no_graph,omitempty"`
	// The filter (engine.Filter), flat: an agent passes lists, not an object.
	Allow      []string `json:"allow,omitempty"`
	Deny       []string `json:"deny,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// RetrieveOutput is retrieve_skills' structured result.
type RetrieveOutput struct {
	Query   string  `json:"query" jsonschema:"the task as given"`
	Results []Skill `json:"results" jsonschema:"the skills, most relevant first"`
}

// Skill is one ranked skill.
type Skill struct {
	Rank        int          `json:"rank" jsonschema:"1-based rank"`
	Name        string       `json:"name"`
	Score       float64      `json:"score" jsonschema:"personalized PageRank score (fused seed score without the graph)"`
	SeedRank    int          `json:"seed_rank,omitempty" jsonschema:"rank among the seeds that match the task best; absent for other skills"`
	Graph       bool         `json:"graph,omitempty" jsonschema:"true when a published edge from a seed raised the skill's score above its own match; a skill with neither seed_rank nor graph is a match beyond the seeds"`
	Description string       `json:"description"`
	Source      string       `json:"source" jsonschema:"the file the skill was built from"`
	Via         []engine.Via `json:"via,omitempty" jsonschema:"published edges that brought the skill in; reverse means the skill is a prerequisite of from"`
}

func (s *Server) retrieve(_ context.Context, _ *mcp.CallToolRequest, in RetrieveInput) (*mcp.CallToolResult, *RetrieveOutput, error) {
	render := in.Render == nil || *in.Render
	// Zero values mean the defaults to the engine; an explicit 0 is out of range here.
	req := engine.Request{Query: in.Query, K: in.K, NoGraph: in.NoGraph, Render: render,
		SkillBudget: in.SkillBudget, TotalBudget: in.TotalBudget,
		Filter: engine.Filter{Allow: in.Allow, Deny: in.Deny, Namespaces: in.Namespaces}}
	if err := api.CheckRequest(req); err != nil {
		return nil, nil, argError(err)
	}
	resp, err := s.eng.Query(req)
	if err != nil {
		return nil, nil, argError(err)
	}
	out := &RetrieveOutput{Query: in.Query, Results: make([]Skill, len(resp.Results))}
	for i, r := range resp.Results {
		out.Results[i] = Skill{Rank: i + 1, Name: r.Name, Score: r.Score, SeedRank: r.SeedRank, Graph: r.Graph,
			Description: s.g.Description(r.ID), Source: s.g.Source(r.ID), Via: r.Via}
	}
	text := resp.Rendered
	if !render {
		text = listText(out)
	}
	return textResult(text), out, nil
}

// listText is the short form of a ranking: one line a skill with its evidence.
func listText(out *RetrieveOutput) string {
	if len(out.Results) == 0 {
		return "No skills found for this task.\n"
	}
	var b strings.Builder
	for _, r := range out.Results {
		why := engine.Why(engine.Result{SeedRank: r.SeedRank, Graph: r.Graph})
		fmt.Fprintf(&b, "%d. %s (%s): %s\n", r.Rank, r.Name, why, oneLine(r.Description))
		for _, v := range r.Via {
			fmt.Fprintf(&b, "   - %s\n", v.Evidence())
		}
	}
	return b.String()
}

// NameInput is get_skill's argument.
type NameInput struct {
	Name string `json:"name"`
}

// SkillText is get_skill's structured result.
type SkillText struct {
	Name     string `json:"name"`
	Source   string `json:"source" jsonschema:"the file the text is from, or the artifact's source path when complete is false"`
	Complete bool   `json:"complete" jsonschema:"true: the whole SKILL.md read from the library; false: description and body head from the graph"`
	Text     string `json:"text"`
	Note     string `json:"note,omitempty" jsonschema:"why the text is not the whole file"`
}

func (s *Server) getSkill(_ context.Context, _ *mcp.CallToolRequest, in NameInput) (*mcp.CallToolResult, *SkillText, error) {
	id, err := s.lookup(in.Name)
	if err != nil {
		return nil, nil, err
	}
	name := s.g.Name(id)
	var note string
	if rel, ok := s.files[name]; ok {
		text, err := s.readFile(rel)
		if err == nil {
			out := &SkillText{Name: name, Source: filepath.ToSlash(filepath.Join(s.opt.Library, rel)), Complete: true, Text: text}
			return textResult(text), out, nil
		}
		note = fmt.Sprintf("Its SKILL.md could not be read from the library (%v).", err)
	} else if s.root != nil {
		note = "The library folder holds no SKILL.md for it."
	} else {
		note = "The server has no library folder (start it with --library DIR for whole files)."
	}
	note = fmt.Sprintf("This is the description and the head of the body stored in the graph, not the whole file; the source was %s. %s",
		s.g.Source(id), note)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", name, s.g.Description(id))
	if body := strings.TrimSpace(s.g.Body(id)); body != "" {
		fmt.Fprintf(&b, "\n%s\n", body)
	}
	text := b.String()
	out := &SkillText{Name: name, Source: s.g.Source(id), Text: text, Note: note}
	return textResult(text + "\n[" + note + "]\n"), out, nil
}

// readFile reads a library file through the root, so that nothing outside the folder is read
// even if the file was replaced by a symlink since the library load, and without blocking, so
// that a named pipe swapped in since then is rejected instead of hanging the server.
func (s *Server) readFile(rel string) (string, error) {
	f, err := s.root.OpenFile(rel, ingest.OpenFlags, 0)
	if err != nil {
		return "", pathError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", pathError(err)
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if fi.Size() > ingest.MaxFileSize {
		return "", fmt.Errorf("larger than %d bytes", ingest.MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, ingest.MaxFileSize+1))
	if err != nil {
		return "", pathError(err)
	}
	if len(data) > ingest.MaxFileSize {
		return "", fmt.Errorf("larger than %d bytes", ingest.MaxFileSize)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), nil
}

// pathError drops the path from a file error: the path is the server's business.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// NeighborsInput are skill_neighbors' arguments.
type NeighborsInput struct {
	Name  string `json:"name"`
	Limit int    `json:"limit,omitempty"`
}

// Neighbors is skill_neighbors' structured result.
type Neighbors struct {
	Name     string `json:"name"`
	Out      []Edge `json:"out" jsonschema:"published edges from this skill to others: it comes first"`
	In       []Edge `json:"in" jsonschema:"published edges from others to this skill: they come first"`
	OutTotal int    `json:"out_total" jsonschema:"edges out, listed or not"`
	InTotal  int    `json:"in_total" jsonschema:"edges in, listed or not"`
}

// Edge is one published edge seen from the asked skill.
type Edge struct {
	Skill    string  `json:"skill" jsonschema:"the skill at the other end"`
	State    string  `json:"state" jsonschema:"calibration state: confirmed, uncertain, scaffold or unvalidated"`
	Type     string  `json:"type" jsonschema:"relation: dependency, workflow, semantic or alternative"`
	Weight   float64 `json:"weight" jsonschema:"published weight in [0, 1]"`
	Assoc    float64 `json:"assoc" jsonschema:"association score A before calibration"`
	Evidence string  `json:"evidence" jsonschema:"the edge in words, from the asked skill's side"`
}

func (s *Server) neighbors(_ context.Context, _ *mcp.CallToolRequest, in NeighborsInput) (*mcp.CallToolResult, *Neighbors, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = DefaultNeighbors
	case limit < 1 || limit > MaxNeighbors:
		return nil, nil, fmt.Errorf("field \"limit\": %d is outside [1, %d]", limit, MaxNeighbors)
	}
	id, err := s.lookup(in.Name)
	if err != nil {
		return nil, nil, err
	}
	g := s.g
	// An edge u→v means u comes first; from u's side the edge is walked in reverse (see
	// engine.Via), from v's side forward.
	edge := func(e, other int, reverse bool) Edge {
		v := engine.Via{From: g.Name(other), State: g.State(e).String(), Weight: float64(g.Weight(e)),
			Type: g.Type(e).String(), Reverse: reverse}
		return Edge{Skill: v.From, State: v.State, Type: v.Type, Weight: v.Weight,
			Assoc: float64(g.Assoc(e)), Evidence: v.Evidence()}
	}
	out := &Neighbors{Name: g.Name(id), Out: []Edge{}, In: []Edge{}}
	lo, hi := g.Out(id)
	for e := lo; e < hi; e++ {
		out.Out = append(out.Out, edge(e, g.Target(e), true))
	}
	for _, e := range s.in[id] {
		out.In = append(out.In, edge(e, s.source(e), false))
	}
	out.OutTotal, out.InTotal = len(out.Out), len(out.In)
	for _, es := range []*[]Edge{&out.Out, &out.In} {
		sort.SliceStable(*es, func(a, b int) bool {
			x, y := (*es)[a], (*es)[b]
			if x.Weight != y.Weight {
				return x.Weight > y.Weight
			}
			return x.Skill < y.Skill
		})
		*es = (*es)[:min(limit, len(*es))]
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d published edges out, %d in.\n", out.Name, out.OutTotal, out.InTotal)
	for _, part := range []struct {
		title string
		edges []Edge
		total int
	}{
		{"Out (this skill comes first)", out.Out, out.OutTotal},
		{"In (these come first)", out.In, out.InTotal},
	} {
		if part.total == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", part.title)
		for _, e := range part.edges {
			fmt.Fprintf(&b, "- %s\n", e.Evidence)
		}
		if n := part.total - len(part.edges); n > 0 {
			fmt.Fprintf(&b, "- … %d more (raise limit)\n", n)
		}
	}
	return textResult(b.String()), out, nil
}

// source returns the skill an edge leaves from.
func (s *Server) source(e int) int {
	n := s.g.NumSkills()
	return sort.Search(n, func(u int) bool { _, hi := s.g.Out(u); return hi > e })
}

// Info is graph_info's structured result.
type Info struct {
	Artifact     string          `json:"artifact,omitempty" jsonschema:"the artifact file"`
	Version      string          `json:"version" jsonschema:"artifact format version"`
	Bytes        int             `json:"bytes"`
	Skills       int             `json:"skills"`
	Edges        int             `json:"edges" jsonschema:"published edges"`
	Terms        int             `json:"terms" jsonschema:"lexicon terms"`
	ByState      map[string]int  `json:"by_state" jsonschema:"published edges per calibration state"`
	ByType       map[string]int  `json:"by_type" jsonschema:"published edges per relation type"`
	VectorDim    int             `json:"vector_dim,omitempty" jsonschema:"dimension of the skill vectors; absent without vectors"`
	VectorModel  string          `json:"vector_model,omitempty" jsonschema:"the model that made the skill vectors"`
	QueryEncoder bool            `json:"query_encoder" jsonschema:"whether the artifact embeds queries itself"`
	Params       map[string]any  `json:"params" jsonschema:"the build parameters"`
	Library      *LibraryInfo    `json:"library,omitempty"`
	Learning     engine.Learning `json:"learning" jsonschema:"what the graph has learned from use; cold: nothing yet, and the note says how it learns"`
}

func (s *Server) info(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *Info, error) {
	g := s.g
	maj, minor := g.Version()
	out := &Info{Artifact: s.opt.Artifact, Version: fmt.Sprintf("%d.%d", maj, minor), Bytes: g.Size(),
		Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms(),
		ByState: map[string]int{}, ByType: map[string]int{}, VectorDim: g.VectorDim(),
		VectorModel: g.VectorModel(), QueryEncoder: g.HasEncoder(), Params: map[string]any{}, Library: s.libInfo,
		Learning: engine.LearningOf(g)}
	for _, st := range graphs.States() {
		out.ByState[st.String()] = 0
	}
	for _, r := range graphs.Relations() {
		out.ByType[r.String()] = 0
	}
	for e := range g.NumEdges() {
		out.ByState[g.State(e).String()]++
		out.ByType[g.Type(e).String()]++
	}
	if p := g.Params(); len(p) > 0 {
		if err := json.Unmarshal(p, &out.Params); err != nil {
			out.Params = map[string]any{"unreadable": err.Error()}
		}
	}
	return nil, out, nil // the content is the JSON of out
}

// lookup finds a skill by name: exactly, else by its normalized form ("Heat_Object" finds
// heat-object) when that is unique; an error suggests the closest names otherwise.
func (s *Server) lookup(name string) (int, error) {
	switch {
	case strings.TrimSpace(name) == "":
		return 0, errors.New(`field "name": empty`)
	case len(name) > MaxNameBytes:
		return 0, fmt.Errorf(`field "name": %d bytes, at most %d`, len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return 0, errors.New(`field "name": not valid UTF-8`)
	}
	if id, ok := s.byName[name]; ok {
		return id, nil
	}
	if id, ok := s.byName[strings.TrimSpace(name)]; ok {
		return id, nil
	}
	norm := normName(name)
	if ids := s.byNorm[norm]; len(ids) == 1 {
		return ids[0], nil
	}
	if close := s.closest(name, norm); len(close) > 0 {
		return 0, fmt.Errorf("unknown skill %q; the closest names are: %s", short(name), strings.Join(close, ", "))
	}
	return 0, fmt.Errorf("unknown skill %q, and no name is close to it; call retrieve_skills to search by task", short(name))
}

// closest returns up to maxSuggestions skill names for a name that matched none: first those
// within a small edit distance of its normalized form, nearest first, then what the engine's
// lexical and fuzzy-name ranking finds for it (it knows typos and the words of names).
func (s *Server) closest(name, norm string) []string {
	var out []string
	seen := map[int]bool{}
	add := func(id int) {
		if !seen[id] && len(out) < maxSuggestions {
			seen[id] = true
			out = append(out, s.g.Name(id))
		}
	}
	type cand struct{ id, d int }
	var cs []cand
	for i, n := range s.norms {
		longer := max(len(n), len(norm))
		if d := len(n) - len(norm); max(d, -d) > longer/3 {
			continue // the distance is at least the length difference
		}
		if d := levenshtein.ComputeDistance(norm, n); d <= longer/3 {
			cs = append(cs, cand{i, d})
		}
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].d != cs[b].d {
			return cs[a].d < cs[b].d
		}
		return cs[a].id < cs[b].id
	})
	for _, c := range cs {
		add(c.id)
	}
	if resp, err := s.eng.Query(engine.Request{Query: name, K: maxSuggestions, NoGraph: true}); err == nil {
		for _, r := range resp.Results {
			add(r.ID)
		}
	}
	return out
}

// normName folds a name to lower-case words joined by single spaces, as the engine's fuzzy
// name matching does.
func normName(s string) string { return strings.Join(engine.Words(s), " ") }

// argError rewords an engine or limit (wasm/api) error for a tool caller.
func argError(err error) error {
	if errors.Is(err, engine.ErrEmptyQuery) {
		return errors.New(`field "query": empty`)
	}
	msg := strings.TrimPrefix(err.Error(), "engine: ")
	msg = strings.TrimPrefix(msg, "api: ")
	// retrieve_skills takes the filter's lists as arguments of their own.
	return errors.New(strings.Replace(msg, `field "filter.`, `field "`, 1))
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
