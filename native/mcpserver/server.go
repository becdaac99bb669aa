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
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
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
	g     *graphs.Graph
	eng   *engine.Engine
	opt   Options
	names *mcpcore.Names
	in    [][]int // published edges into each skill

	root     *os.Root          // the library folder; nil without one
	files    map[string]string // skill name → its SKILL.md relative to root
	libInfo  *LibraryInfo
	problems []ingest.Problem
}

// LibraryInfo describes the library folder of a Server.
type LibraryInfo struct {
	Dir      string `json:"dir"`
	Skills   int    `json:"skills"`
	Served   int    `json:"served"`
	Problems int    `json:"problems"`
}

// New prepares a server over g. With opt.Library it loads the library to learn which SKILL.md
// file belongs to which skill; bad entries in it are skipped (Problems lists them), but a
// folder that cannot be read or holds no skill is an error.
func New(g *graphs.Graph, opt Options) (*Server, error) {
	s := &Server{g: g, eng: engine.New(g), opt: opt}
	s.names = mcpcore.NewNames(s.eng)
	n := g.NumSkills()
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
		if _, ok := s.names.Exact(sk.Name); ok {
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

// MCP returns an MCP server with the tools of mcpcore.Tools registered: their names, texts,
// schemas and annotations are those the edge worker serves. Each call returns a new one.
func (s *Server) MCP() *mcp.Server {
	version := s.opt.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: mcpcore.ServerName, Title: mcpcore.ServerTitle, Version: version},
		// Tools only, and a list that never changes, as the edge worker says: no logging.
		&mcp.ServerOptions{Instructions: mcpcore.Instructions, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	for _, t := range mcpcore.Tools {
		switch t.Name {
		case mcpcore.Retrieve:
			addTool(srv, t, s.retrieve)
		case mcpcore.GetSkill:
			addTool(srv, t, s.getSkill)
		case mcpcore.Neighbors:
			addTool(srv, t, s.neighbors)
		case mcpcore.GraphInfo:
			addTool(srv, t, s.info)
		case mcpcore.Report:
			addTool(srv, t, s.reportUse)
		default:
			panic("mcpserver: no handler for the tool " + t.Name)
		}
	}
	srv.AddReceivingMiddleware(checkArgs())
	return srv
}

// addTool registers t with h behind safe.
func addTool[In, Out any](srv *mcp.Server, t mcpcore.Tool, h mcp.ToolHandlerFor[In, Out]) {
	ann := &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, IdempotentHint: t.ReadOnly, OpenWorldHint: new(false)}
	mcp.AddTool(srv, &mcp.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema),
		OutputSchema: json.RawMessage(t.OutputSchema), Annotations: ann,
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

// feedbackInput are report_skill_use's arguments.
type feedbackInput struct {
	Query   string   `json:"query"`
	Used    []string `json:"used"`
	Outcome string   `json:"outcome,omitempty"`
}

// FeedbackOutput is report_skill_use's structured result; its schema, with the words, is
// mcpcore's (TestOutputSchemas holds the two together), as are those of the results below.
type FeedbackOutput struct {
	Recorded int    `json:"recorded"`
	Outcome  string `json:"outcome,omitempty"`
}

// reportUse checks a report as the HTTP API does and hands it to the store.
func (s *Server) reportUse(ctx context.Context, req *mcp.CallToolRequest, in feedbackInput) (*mcp.CallToolResult, *FeedbackOutput, error) {
	if s.opt.Feedback == nil {
		return nil, nil, errors.New(mcpcore.FeedbackOff + " (start caskg mcp with --feedback FILE to record reports)")
	}
	source := StdioSource
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		var err error
		if source, err = s.opt.Reporters.Check(req.Extra.Header.Get("Authorization")); err != nil {
			return nil, nil, errors.New(mcpcore.NotRecorded + err.Error())
		}
	}
	fb := api.Feedback{Query: in.Query, Used: in.Used, Outcome: in.Outcome, Source: source}
	if err := s.names.CheckFeedback(&fb); err != nil {
		return nil, nil, err
	}
	if err := s.opt.Feedback.Append(ctx, fb); err != nil {
		var rl *api.RateLimitError
		if errors.As(err, &rl) {
			return nil, nil, rl
		}
		return nil, nil, errors.New(mcpcore.NotStored + err.Error())
	}
	return textResult(mcpcore.RecordedText(len(fb.Used), fb.Outcome)), &FeedbackOutput{Recorded: len(fb.Used), Outcome: fb.Outcome}, nil
}

// retrieveInput are retrieve_skills' arguments.
type retrieveInput struct {
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

func (s *Server) retrieve(_ context.Context, _ *mcp.CallToolRequest, in retrieveInput) (*mcp.CallToolResult, *RetrieveOutput, error) {
	render := in.Render == nil || *in.Render
	// Zero values mean the defaults to the engine; an explicit 0 is out of range here.
	req := engine.Request{Query: in.Query, K: in.K, NoGraph: in.NoGraph, NoMemory: in.NoMemory, MinScore: in.MinScore, Render: render,
		SkillBudget: in.SkillBudget, TotalBudget: in.TotalBudget,
		Filter: engine.Filter{Allow: in.Allow, Deny: in.Deny, Namespaces: in.Namespaces}}
	if err := api.Service.Check(req); err != nil {
		return nil, nil, mcpcore.ArgError(err)
	}
	resp, err := s.eng.Query(req)
	if err != nil {
		return nil, nil, mcpcore.ArgError(err)
	}
	out := &RetrieveOutput{Query: in.Query, Results: make([]Skill, len(resp.Results)), Match: resp.Match, Note: resp.Note}
	for i, r := range resp.Results {
		out.Results[i] = Skill{Rank: i + 1, Name: r.Name, Score: r.Score, Match: r.Match, SeedRank: r.SeedRank, Graph: r.Graph,
			Description: s.g.Description(r.ID), Source: s.g.Source(r.ID), Via: r.Via, Recalled: r.Recalled}
	}
	text := resp.Rendered
	if !render {
		list := make([]mcpcore.Listed, len(out.Results))
		for i, r := range out.Results {
			list[i] = mcpcore.Listed{Rank: r.Rank, Name: r.Name, SeedRank: r.SeedRank, Graph: r.Graph, Description: r.Description, Via: r.Via, Recalled: r.Recalled}
		}
		text = mcpcore.ListText(list, resp.Note)
	}
	return textResult(text), out, nil
}

// nameInput is get_skill's argument.
type nameInput struct {
	Name string `json:"name"`
}

// SkillText is get_skill's structured result.
type SkillText struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Complete bool   `json:"complete"`
	Text     string `json:"text"`
	Note     string `json:"note,omitempty"`
}

func (s *Server) getSkill(_ context.Context, _ *mcp.CallToolRequest, in nameInput) (*mcp.CallToolResult, *SkillText, error) {
	id, err := s.names.Lookup(in.Name)
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
		note = mcpcore.NoLibrary
	}
	note = mcpcore.HeadNote(s.g.Source(id), note)
	text, full := mcpcore.HeadText(name, s.g.Description(id), s.g.Body(id), note)
	out := &SkillText{Name: name, Source: s.g.Source(id), Text: text, Note: note}
	return textResult(full), out, nil
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

// neighborsInput are skill_neighbors' arguments.
type neighborsInput struct {
	Name  string `json:"name"`
	Limit int    `json:"limit,omitempty"`
}

// Neighbors is skill_neighbors' structured result.
type Neighbors struct {
	Name     string `json:"name"`
	Out      []Edge `json:"out"`
	In       []Edge `json:"in"`
	OutTotal int    `json:"out_total"`
	InTotal  int    `json:"in_total"`
}

// Edge is one published edge seen from the asked skill.
type Edge = mcpcore.Edge

func (s *Server) neighbors(_ context.Context, _ *mcp.CallToolRequest, in neighborsInput) (*mcp.CallToolResult, *Neighbors, error) {
	limit, err := mcpcore.NeighborsLimit(in.Limit)
	if err != nil {
		return nil, nil, err
	}
	id, err := s.names.Lookup(in.Name)
	if err != nil {
		return nil, nil, err
	}
	out := &Neighbors{Name: s.g.Name(id)}
	out.Out, out.In = mcpcore.EdgesOf(s.g, id, s.in[id])
	out.OutTotal, out.InTotal = len(out.Out), len(out.In)
	out.Out, out.In = out.Out[:min(limit, len(out.Out))], out.In[:min(limit, len(out.In))]
	return textResult(mcpcore.NeighborsText(out.Name, out.Out, out.In, out.OutTotal, out.InTotal)), out, nil
}

// Info is graph_info's structured result.
type Info struct {
	Artifact     string          `json:"artifact,omitempty"`
	Version      string          `json:"version"`
	Bytes        int             `json:"bytes"`
	Skills       int             `json:"skills"`
	Edges        int             `json:"edges"`
	Terms        int             `json:"terms"`
	ByState      map[string]int  `json:"by_state"`
	ByType       map[string]int  `json:"by_type"`
	VectorDim    int             `json:"vector_dim,omitempty"`
	VectorModel  string          `json:"vector_model,omitempty"`
	QueryEncoder bool            `json:"query_encoder"`
	Params       map[string]any  `json:"params"`
	Library      *LibraryInfo    `json:"library,omitempty"`
	Learning     engine.Learning `json:"learning"`
	MemoryBytes  int             `json:"memory_bytes,omitempty"` // of the memory of past tasks' sections; its counts are in params.memory
}

func (s *Server) info(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *Info, error) {
	g := s.g
	maj, minor := g.Version()
	out := &Info{Artifact: s.opt.Artifact, Version: fmt.Sprintf("%d.%d", maj, minor), Bytes: g.Size(),
		Skills: g.NumSkills(), Edges: g.NumEdges(), Terms: g.NumTerms(),
		VectorDim:   g.VectorDim(),
		VectorModel: g.VectorModel(), QueryEncoder: g.HasEncoder(), Params: map[string]any{}, Library: s.libInfo,
		Learning: engine.LearningOf(g), MemoryBytes: mcpcore.MemoryBytes(g)}
	out.ByState, out.ByType = mcpcore.EdgeCounts(g)
	if p := g.Params(); len(p) > 0 {
		if err := json.Unmarshal(p, &out.Params); err != nil {
			out.Params = map[string]any{"unreadable": err.Error()}
		}
	}
	return nil, out, nil // the content is the JSON of out
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
