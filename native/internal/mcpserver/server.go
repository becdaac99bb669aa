// Package mcpserver serves a caskg skill graph to agents over the Model Context Protocol, with
// the official Go SDK. The tools are wasm/mcpcore's, the layer the edge worker serves too: their
// definitions, argument and result types, and mcpcore.Core, which runs them; this package adds
// the SDK transport and what only a native server has, the library folder get_skill reads whole
// files from and the reporter of a call. `caskg mcp` runs it over stdio or streamable HTTP
// (native/internal/mcptransport, which the gateway shares), tests over an in-memory pipe.
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
//     validated as POST /v1/feedback validates it (service.CheckFeedback) and appended to
//     Options.Feedback (caskg mcp --feedback FILE) with its reporter (Options.Reporters:
//     over HTTP a bearer token beyond loopback); without a store it answers that feedback is
//     off.
//
// Bad arguments give tool results with isError set and a message naming the field and the rule
// it breaks, repeating at most a short prefix of the value; an unknown skill name gives the
// closest names. mcptransport.Transport carries the server over stdio and answers malformed
// JSON-RPC lines itself instead of ending the session. retrieve_skills holds its query and k to the limits every
// caskg surface shares (the table in wasm/service). No argument reaches the file system: get_skill
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
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
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
	Feedback service.FeedbackStore
	// Reporters decide who may call report_skill_use over HTTP, and name each report's source:
	// service.FeedbackAuth.Check with the call's Authorization header. A call that came with no
	// HTTP request (stdio, an in-memory pipe) is from StdioSource: only the process that
	// started the server speaks on its stdio.
	Reporters service.FeedbackAuth
}

// StdioSource is the source of reports that came over stdio: one reporter, whichever agent.
const StdioSource = "mcp:stdio"

// Server answers the tools over one graph. It is safe for concurrent use.
type Server struct {
	g    *graphs.Graph
	core *mcpcore.Core
	opt  Options

	root     *os.Root          // the library folder; nil without one
	files    map[string]string // skill name → its SKILL.md relative to root
	libInfo  *mcpcore.LibraryInfo
	problems []ingest.Problem
}

// New prepares a server over g. With opt.Library it loads the library to learn which SKILL.md
// file belongs to which skill; bad entries in it are skipped (Problems lists them), but a
// folder that cannot be read or holds no skill is an error.
func New(g *graphs.Graph, opt Options) (*Server, error) {
	s := &Server{g: g, core: mcpcore.NewCore(engine.New(g)), opt: opt}
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
	s.libInfo = &mcpcore.LibraryInfo{Dir: dir, Problems: len(lib.Problems)}
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
		if _, ok := s.core.Names().Exact(sk.Name); ok {
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
func (s *Server) Library() *mcpcore.LibraryInfo { return s.libInfo }

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

// reportUse checks a report as the HTTP API does and hands it to the store.
func (s *Server) reportUse(ctx context.Context, req *mcp.CallToolRequest, in mcpcore.ReportArgs) (*mcp.CallToolResult, *mcpcore.FeedbackOutput, error) {
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
	text, out, err := s.core.Report(ctx, s.opt.Feedback, in, source)
	if err != nil {
		return nil, nil, err
	}
	return textResult(text), out, nil
}

func (s *Server) retrieve(_ context.Context, _ *mcp.CallToolRequest, in mcpcore.RetrieveArgs) (*mcp.CallToolResult, *mcpcore.RetrieveOutput, error) {
	text, out, err := s.core.Retrieve(in)
	if err != nil {
		return nil, nil, err
	}
	return textResult(text), out, nil
}

func (s *Server) getSkill(_ context.Context, _ *mcp.CallToolRequest, in mcpcore.NameArgs) (*mcp.CallToolResult, *mcpcore.SkillText, error) {
	id, err := s.core.Names().Lookup(in.Name)
	if err != nil {
		return nil, nil, err
	}
	name := s.g.Name(id)
	var note string
	if rel, ok := s.files[name]; ok {
		text, err := s.readFile(rel)
		if err == nil {
			out := &mcpcore.SkillText{Name: name, Source: filepath.ToSlash(filepath.Join(s.opt.Library, rel)), Complete: true, Text: text}
			return textResult(text), out, nil
		}
		note = fmt.Sprintf("Its SKILL.md could not be read from the library (%v).", err)
	} else if s.root != nil {
		note = "The library folder holds no SKILL.md for it."
	} else {
		note = mcpcore.NoLibrary
	}
	full, out := s.core.Head(id, note)
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

func (s *Server) neighbors(_ context.Context, _ *mcp.CallToolRequest, in mcpcore.NeighborsArgs) (*mcp.CallToolResult, *mcpcore.NeighborsOutput, error) {
	text, out, err := s.core.Neighbors(in)
	if err != nil {
		return nil, nil, err
	}
	return textResult(text), out, nil
}

func (s *Server) info(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *mcpcore.Info, error) {
	out := s.core.Info(s.opt.Artifact, s.libInfo)
	out.Params = map[string]any{}
	if p := s.g.Params(); len(p) > 0 {
		if err := json.Unmarshal(p, &out.Params); err != nil {
			out.Params = map[string]any{"unreadable": err.Error()}
		}
	}
	return nil, out, nil // the content is the JSON of out
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
