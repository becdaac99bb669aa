package mcpcore

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// Options configure a Handler.
type Options struct {
	Version   string            // the server version in serverInfo
	Artifact  string            // the artifact's name in graph_info
	Feedback  api.FeedbackStore // keeps report_skill_use's reports; nil: feedback is off
	Reporters api.FeedbackAuth  // who may report, by the request's Authorization header
}

// Handler serves the tools as MCP over streamable HTTP, stateless and with JSON responses: each
// POST carries one JSON-RPC message; a request gets its response as the body (200), a
// notification or a response gets 202. There is no session and no server-sent stream (GET
// answers 405), which is all a tool server needs and fits a worker isolate.
type Handler struct {
	eng   *engine.Engine
	names *Names
	opt   Options
	in    [][]int // published edges into each skill
}

// New returns a handler over eng's graph.
func New(eng *engine.Engine, opt Options) *Handler {
	g := eng.Graph()
	h := &Handler{eng: eng, names: NewNames(eng), opt: opt, in: make([][]int, g.NumSkills())}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			h.in[g.Target(e)] = append(h.in[g.Target(e)], e)
		}
	}
	return h
}

// The protocol versions the handler speaks, newest first: those of the Go SDK caskg mcp runs.
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

// Serve answers one HTTP request to the MCP endpoint.
func (h *Handler) Serve(r *api.Request) (resp *api.Response) {
	resp = &api.Response{}
	resp.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case "OPTIONS":
		resp.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		resp.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID")
		resp.Set("Access-Control-Max-Age", "86400")
		resp.Status = 204
		return resp
	case "POST":
	default:
		r := api.ErrorResponse(405, "mcp: "+r.Method+" /mcp: this server is stateless and keeps no stream; send JSON-RPC messages by POST")
		r.Set("Allow", "POST, OPTIONS")
		return r
	}
	if r.ContentLength > api.MaxBodyBytes {
		return rpcAnswer(413, "null", nil, &rpcError{codeInvalidRequest, "mcp: body over " + strconv.Itoa(api.MaxBodyBytes) + " bytes"})
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r.Body, api.MaxBodyBytes+1)); err != nil {
			return rpcAnswer(400, "null", nil, &rpcError{codeParse, "mcp: reading the body: " + err.Error()})
		}
	}
	if len(body) > api.MaxBodyBytes {
		return rpcAnswer(413, "null", nil, &rpcError{codeInvalidRequest, "mcp: body over " + strconv.Itoa(api.MaxBodyBytes) + " bytes"})
	}
	if i := jsontext.InvalidUTF8(body); i >= 0 {
		return rpcAnswer(400, "null", nil, &rpcError{codeParse, "mcp: body not valid UTF-8 at byte " + strconv.Itoa(i)})
	}
	msg, err := parseMessage(body)
	if err != nil {
		return rpcAnswer(400, msg.id, nil, err)
	}
	if msg.id == "" { // a notification, or a response to us (never asked for)
		resp.Status = 202
		return resp
	}
	defer func() {
		if p := recover(); p != nil {
			resp = rpcAnswer(200, msg.id, nil, &rpcError{codeInternal, "mcp: internal error: " + errtext.Recovered(p)})
		}
	}()
	result, err := h.call(r, msg, body)
	return rpcAnswer(200, msg.id, result, err)
}

// message is what the handler reads of a JSON-RPC message; params are decoded by method.
type message struct {
	id     string // the id as JSON, "" for a notification or a response
	method string
}

// parseMessage reads the envelope; the id is kept as JSON text to echo.
func parseMessage(b []byte) (message, error) {
	var m message
	m.id = "null"
	d := jsontext.NewDecoder(b)
	if d.Peek() != '{' {
		return m, &rpcError{codeInvalidRequest, "mcp: want one JSON-RPC message, an object (batches are not taken)"}
	}
	hasID, isResponse := false, false
	err := d.Object(func(key string) error {
		switch key {
		case "jsonrpc":
			v, err := d.String()
			if err == nil && v != "2.0" {
				err = errors.New(`"jsonrpc" is not "2.0"`)
			}
			return err
		case "id":
			hasID = true
			switch d.Peek() {
			case '"':
				s, err := d.String()
				m.id = string(jsontext.AppendString(nil, s))
				return err
			default:
				n, err := d.Number()
				m.id = n
				return err
			}
		case "method":
			var err error
			m.method, err = d.String()
			return err
		case "result", "error":
			isResponse = true
		}
		return d.Skip()
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		// Not JSON, so no id to trust: JSON-RPC answers a parse error with a null id.
		m.id = "null"
		return m, &rpcError{codeParse, "mcp: " + err.Error()}
	}
	switch {
	case isResponse:
		m.id = ""
	case m.method == "":
		return m, &rpcError{codeInvalidRequest, `mcp: no "method"`}
	case !hasID:
		m.id = ""
	}
	return m, nil
}

// params calls member for each member of the message's params.
func params(body []byte, member func(d *jsontext.Decoder, key string) error) error {
	d := jsontext.NewDecoder(body)
	return d.Object(func(key string) error {
		if key != "params" {
			return d.Skip()
		}
		return d.Object(func(k string) error { return member(d, k) })
	})
}

// stringParam is the string member key of the message's params ("" when it has none).
func stringParam(body []byte, key string) (string, error) {
	var v string
	err := params(body, func(d *jsontext.Decoder, k string) error {
		if k == key {
			var err error
			v, err = d.String()
			return err
		}
		return d.Skip()
	})
	return v, err
}

func (h *Handler) call(r *api.Request, m message, body []byte) ([]byte, error) {
	switch m.method {
	case "initialize":
		want, err := stringParam(body, "protocolVersion")
		if err != nil {
			return nil, &rpcError{codeInvalidParams, "mcp: initialize: " + err.Error()}
		}
		version := protocolVersions[0]
		for _, v := range protocolVersions {
			if v == want {
				version = v
			}
		}
		b := append([]byte(`{"capabilities":{"tools":{}},"instructions":`), jsontext.AppendString(nil, Instructions)...)
		b = jsontext.AppendString(append(b, `,"protocolVersion":`...), version)
		b = jsontext.AppendString(append(b, `,"serverInfo":{"name":`...), ServerName)
		b = jsontext.AppendString(append(b, `,"title":`...), ServerTitle)
		v := h.opt.Version
		if v == "" {
			v = "dev"
		}
		b = jsontext.AppendString(append(b, `,"version":`...), v)
		return append(b, "}}"...), nil
	case "ping":
		return []byte("{}"), nil
	case "tools/list":
		return toolsList(), nil
	case "tools/call":
		name, err := stringParam(body, "name")
		if err != nil {
			return nil, &rpcError{codeInvalidParams, "mcp: tools/call: " + err.Error()}
		}
		if _, ok := lookup(name); !ok {
			return nil, &rpcError{codeInvalidParams, "unknown tool " + strconv.Quote(Short(name))}
		}
		// The arguments against the tool's input schema, as caskg mcp checks them (args.go).
		argErr, given := error(nil), false
		if err := params(body, func(d *jsontext.Decoder, k string) error {
			if k != "arguments" {
				return d.Skip()
			}
			given = true
			var err error
			argErr, err = checkArgsAt(name, d)
			return err
		}); err != nil {
			return nil, &rpcError{codeInvalidParams, "mcp: tools/call: " + err.Error()}
		}
		if !given {
			argErr = CheckArgs(name, nil)
		}
		content, structured, err := "", []byte(nil), argErr
		if err == nil {
			content, structured, err = h.tool(r, name, body)
		}
		return toolResult(content, structured, err), nil
	}
	return nil, &rpcError{codeNoMethod, "mcp: method " + strconv.Quote(Short(m.method)) + " is not served here (initialize, ping, tools/list, tools/call)"}
}

// arguments calls member for each argument of the tools/call in body.
func arguments(body []byte, member func(d *jsontext.Decoder, key string) error) error {
	return params(body, func(d *jsontext.Decoder, k string) error {
		if k != "arguments" {
			return d.Skip()
		}
		return d.Object(func(key string) error { return member(d, key) })
	})
}

// intArg reads an integer argument; a number with a zero fraction (3.0) is one, as JSON Schema says.
func intArg(d *jsontext.Decoder, field string) (int, error) {
	tok, err := d.Number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, errors.New(`field "` + field + `": ` + tok + " is not a whole number")
	}
	return int(f), nil
}

func stringList(d *jsontext.Decoder) ([]string, error) {
	var out []string
	err := d.Array(func(int) error {
		s, err := d.String()
		out = append(out, s)
		return err
	})
	return out, err
}

// tool runs the tool name on the arguments in body: its text, its structured content (JSON,
// nil for none), or the error a caller reads.
func (h *Handler) tool(r *api.Request, name string, body []byte) (string, []byte, error) {
	switch name {
	case Retrieve:
		return h.retrieve(body)
	case GetSkill, Neighbors:
		var skill string
		limit := 0
		seen := false
		err := arguments(body, func(d *jsontext.Decoder, k string) error {
			var err error
			switch {
			case k == "name":
				skill, err = d.String()
				seen = true
			case k == "limit" && name == Neighbors:
				limit, err = intArg(d, "limit")
			default:
				return errors.New(`field "` + Short(k) + `": unknown; the arguments are in the tool's input schema`)
			}
			return err
		})
		if err != nil {
			return "", nil, err
		}
		if !seen {
			return "", nil, errors.New(`field "name": missing`)
		}
		if name == GetSkill {
			return h.getSkill(skill)
		}
		return h.neighbors(skill, limit)
	case GraphInfo:
		if err := arguments(body, func(d *jsontext.Decoder, k string) error {
			return errors.New(`field "` + Short(k) + `": unknown; graph_info takes no arguments`)
		}); err != nil {
			return "", nil, err
		}
		b := h.info()
		return string(b), b, nil
	default:
		return h.report(r, body)
	}
}

func (h *Handler) retrieve(body []byte) (string, []byte, error) {
	req := engine.Request{Render: true}
	seen := false
	var given []string // an argument k of 0 is out of range, not the default
	err := arguments(body, func(d *jsontext.Decoder, k string) error {
		var err error
		switch k {
		case "query":
			req.Query, err = d.String()
			seen = true
		case "k":
			req.K, err = intArg(d, k)
			given = append(given, k)
		case "skill_budget":
			req.SkillBudget, err = intArg(d, k)
		case "total_budget":
			req.TotalBudget, err = intArg(d, k)
		case "render":
			req.Render, err = d.Bool()
		case "no_graph":
			req.NoGraph, err = d.Bool()
		case "no_memory":
			req.NoMemory, err = d.Bool()
		case "min_score":
			req.MinScore, err = d.Float(64)
		case "allow":
			req.Filter.Allow, err = stringList(d)
		case "deny":
			req.Filter.Deny, err = stringList(d)
		case "namespaces":
			req.Filter.Namespaces, err = stringList(d)
		default:
			return errors.New(`field "` + Short(k) + `": unknown; the arguments are in the tool's input schema`)
		}
		return err
	})
	switch {
	case err != nil:
		return "", nil, err
	case !seen:
		return "", nil, errors.New(`field "query": missing`)
	}
	if err := api.Service.Check(req, given...); err != nil {
		return "", nil, argError(err)
	}
	resp, err := h.eng.Query(req)
	if err != nil {
		return "", nil, argError(err)
	}
	g := h.eng.Graph()
	b := jsontext.AppendString([]byte(`{"query":`), req.Query)
	b = append(b, `,"results":[`...)
	list := make([]Listed, len(resp.Results))
	for i, r := range resp.Results {
		list[i] = Listed{Rank: i + 1, Name: r.Name, SeedRank: r.SeedRank, Graph: r.Graph, Description: g.Description(r.ID), Via: r.Via, Recalled: r.Recalled}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"rank":`...), int64(i+1), 10)
		b = jsontext.AppendString(append(b, `,"name":`...), r.Name)
		b, _ = jsontext.AppendFloat(append(b, `,"score":`...), r.Score, 64)
		b, _ = jsontext.AppendFloat(append(b, `,"match":`...), r.Match, 64)
		if r.SeedRank > 0 {
			b = strconv.AppendInt(append(b, `,"seed_rank":`...), int64(r.SeedRank), 10)
		}
		if r.Graph {
			b = append(b, `,"graph":true`...)
		}
		b = jsontext.AppendString(append(b, `,"description":`...), g.Description(r.ID))
		b = jsontext.AppendString(append(b, `,"source":`...), g.Source(r.ID))
		if len(r.Via) > 0 {
			b = append(b, `,"via":[`...)
			for j, v := range r.Via {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsontext.AppendString(append(b, `{"from":`...), v.From)
				b = jsontext.AppendString(append(b, `,"state":`...), v.State)
				b, _ = jsontext.AppendFloat(append(b, `,"weight":`...), float64(v.Weight), 32)
				b = jsontext.AppendString(append(b, `,"type":`...), v.Type)
				if v.Reverse {
					b = append(b, `,"reverse":true`...)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		if rc := r.Recalled; rc != nil {
			b = strconv.AppendInt(append(b, `,"recalled":{"runs":`...), int64(rc.Runs), 10)
			b = append(b, `,"terms":[`...)
			for j, term := range rc.Terms {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsontext.AppendString(b, term)
			}
			b = append(b, "]}"...)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b, _ = jsontext.AppendFloat(append(b, `,"match":`...), resp.Match, 64)
	if resp.Note != "" {
		b = jsontext.AppendString(append(b, `,"note":`...), resp.Note)
	}
	b = append(b, '}')
	text := resp.Rendered
	if !req.Render {
		text = ListText(list, resp.Note)
	}
	return text, b, nil
}

func (h *Handler) getSkill(name string) (string, []byte, error) {
	id, err := h.names.Lookup(name)
	if err != nil {
		return "", nil, err
	}
	g := h.eng.Graph()
	note := HeadNote(g.Source(id), NoLibrary)
	text, full := HeadText(g.Name(id), g.Description(id), g.Body(id), note)
	b := jsontext.AppendString([]byte(`{"name":`), g.Name(id))
	b = jsontext.AppendString(append(b, `,"source":`...), g.Source(id))
	b = jsontext.AppendString(append(b, `,"complete":false,"text":`...), text)
	b = jsontext.AppendString(append(b, `,"note":`...), note)
	return full, append(b, '}'), nil
}

func (h *Handler) neighbors(name string, limit int) (string, []byte, error) {
	limit, err := NeighborsLimit(limit)
	if err != nil {
		return "", nil, err
	}
	id, err := h.names.Lookup(name)
	if err != nil {
		return "", nil, err
	}
	g := h.eng.Graph()
	out, in := EdgesOf(g, id, h.in[id])
	outTotal, inTotal := len(out), len(in)
	out, in = out[:min(limit, len(out))], in[:min(limit, len(in))]
	b := jsontext.AppendString([]byte(`{"name":`), g.Name(id))
	for _, part := range []struct {
		key   string
		edges []Edge
	}{{"out", out}, {"in", in}} {
		b = append(b, `,"`+part.key+`":[`...)
		for i, e := range part.edges {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(append(b, `{"skill":`...), e.Skill)
			b = jsontext.AppendString(append(b, `,"state":`...), e.State)
			b = jsontext.AppendString(append(b, `,"type":`...), e.Type)
			b, _ = jsontext.AppendFloat(append(b, `,"weight":`...), float64(e.Weight), 32)
			b, _ = jsontext.AppendFloat(append(b, `,"assoc":`...), float64(e.Assoc), 32)
			b = jsontext.AppendString(append(b, `,"evidence":`...), e.Evidence)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = strconv.AppendInt(append(b, `,"out_total":`...), int64(outTotal), 10)
	b = strconv.AppendInt(append(b, `,"in_total":`...), int64(inTotal), 10)
	return NeighborsText(g.Name(id), out, in, outTotal, inTotal), append(b, '}'), nil
}

// EdgeCounts counts g's published edges by calibration state and by relation, every state and
// relation present (0 where no edge has it): graph_info's by_state and by_type, and caskg
// inspect's.
func EdgeCounts(g *graphs.Graph) (byState, byType map[string]int) {
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

// EdgesOf lists skill id's published edges out and in (ins, the edges into it), each
// strongest first, then by name. An edge u→v means u comes first; from u's side the edge is
// walked in reverse (see engine.Via), from v's side forward.
func EdgesOf(g *graphs.Graph, id int, ins []int) (out, in []Edge) {
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

// info is graph_info's JSON: the fields `caskg mcp` gives for an artifact without a library,
// keys sorted as the Go SDK writes them in the text content.
func (h *Handler) info() []byte {
	g := h.eng.Graph()
	maj, mnr := g.Version()
	b := []byte(`{`)
	if h.opt.Artifact != "" {
		b = jsontext.AppendString(append(b, `"artifact":`...), h.opt.Artifact)
		b = append(b, ',')
	}
	byState, byType := EdgeCounts(g)
	b = append(b, `"by_state":{`...)
	for i, st := range sortedNames(graphs.States()) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(jsontext.AppendString(b, st), ':'), int64(byState[st]), 10)
	}
	b = append(b, `},"by_type":{`...)
	for i, r := range sortedNames(graphs.Relations()) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(jsontext.AppendString(b, r), ':'), int64(byType[r]), 10)
	}
	b = strconv.AppendInt(append(b, `},"bytes":`...), int64(g.Size()), 10)
	b = strconv.AppendInt(append(b, `,"edges":`...), int64(g.NumEdges()), 10)
	l := engine.LearningOf(g)
	b = strconv.AppendBool(append(b, `,"learning":{"cold":`...), l.Cold)
	b = strconv.AppendInt(append(b, `,"live_edges":`...), int64(l.Live), 10)
	b = jsontext.AppendString(append(b, `,"note":`...), l.Note)
	b = strconv.AppendInt(append(b, `,"runs":`...), int64(l.Runs), 10)
	b = append(b, '}')
	if n := MemoryBytes(g); n > 0 {
		b = strconv.AppendInt(append(b, `,"memory_bytes":`...), int64(n), 10)
	}
	b = append(b, `,"params":`...)
	if p := g.Params(); len(p) > 0 && jsontext.Valid(p) {
		b = append(b, p...)
	} else {
		b = append(b, "{}"...)
	}
	b = strconv.AppendBool(append(b, `,"query_encoder":`...), g.HasEncoder())
	b = strconv.AppendInt(append(b, `,"skills":`...), int64(g.NumSkills()), 10)
	b = strconv.AppendInt(append(b, `,"terms":`...), int64(g.NumTerms()), 10)
	if g.VectorDim() > 0 {
		b = strconv.AppendInt(append(b, `,"vector_dim":`...), int64(g.VectorDim()), 10)
	}
	if m := g.VectorModel(); m != "" {
		b = jsontext.AppendString(append(b, `,"vector_model":`...), m)
	}
	b = jsontext.AppendString(append(b, `,"version":`...), strconv.Itoa(maj)+"."+strconv.Itoa(mnr))
	return append(b, '}')
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

func (h *Handler) report(r *api.Request, body []byte) (string, []byte, error) {
	var fb api.Feedback
	err := arguments(body, func(d *jsontext.Decoder, k string) error {
		var err error
		switch k {
		case "query":
			fb.Query, err = d.String()
		case "outcome":
			fb.Outcome, err = d.String()
		case "used":
			fb.Used, err = stringList(d)
		default:
			return errors.New(`field "` + Short(k) + `": unknown; the arguments are in the tool's input schema`)
		}
		return err
	})
	if err != nil {
		return "", nil, err
	}
	if h.opt.Feedback == nil {
		return "", nil, errors.New(FeedbackOff)
	}
	auth := ""
	if r.Header != nil {
		auth = r.Header.Get("Authorization")
	}
	if fb.Source, err = h.opt.Reporters.Check(auth); err != nil {
		return "", nil, errors.New(NotRecorded + err.Error())
	}
	if err := h.names.CheckFeedback(&fb); err != nil {
		return "", nil, err
	}
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := h.opt.Feedback.Append(ctx, fb); err != nil {
		var rl *api.RateLimitError
		if errors.As(err, &rl) {
			return "", nil, rl
		}
		return "", nil, errors.New(NotStored + err.Error())
	}
	b := strconv.AppendInt([]byte(`{"recorded":`), int64(len(fb.Used)), 10)
	if fb.Outcome != "" {
		b = jsontext.AppendString(append(b, `,"outcome":`...), fb.Outcome)
	}
	return RecordedText(len(fb.Used), fb.Outcome), append(b, '}'), nil
}

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

// ArgError is argError for the Go SDK server.
func ArgError(err error) error { return argError(err) }

// NeighborsLimit is skill_neighbors' limit argument checked, 0 meaning the default.
func NeighborsLimit(limit int) (int, error) {
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
	NotStored   = "feedback not recorded: "
)

// toolResult is a CallToolResult: the text, the structured content, or the error as a result
// with isError set (a tool's failure is the model's to read, not a protocol error).
func toolResult(text string, structured []byte, err error) []byte {
	if err != nil {
		b := jsontext.AppendString([]byte(`{"content":[{"type":"text","text":`), err.Error())
		return append(b, `}],"isError":true}`...)
	}
	b := jsontext.AppendString([]byte(`{"content":[{"type":"text","text":`), text)
	b = append(b, "}]"...)
	if structured != nil {
		b = append(append(b, `,"structuredContent":`...), structured...)
	}
	return append(b, '}')
}

// toolsList is tools/list's result: every tool of Tools.
func toolsList() []byte {
	b := []byte(`{"tools":[`)
	for i, t := range Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(append(b, `{"name":`...), t.Name)
		b = jsontext.AppendString(append(b, `,"title":`...), t.Title)
		b = jsontext.AppendString(append(b, `,"description":`...), t.Description)
		b = append(append(b, `,"inputSchema":`...), compact(t.InputSchema)...)
		b = append(append(b, `,"outputSchema":`...), compact(t.OutputSchema)...)
		b = jsontext.AppendString(append(b, `,"annotations":{"title":`...), t.Title)
		ro := strconv.FormatBool(t.ReadOnly)
		b = append(b, `,"readOnlyHint":`+ro+`,"idempotentHint":`+ro+`,"openWorldHint":false}}`...)
	}
	return append(b, "]}"...)
}

// compact drops the white space between the tokens of the JSON text s (outside strings).
func compact(s string) []byte {
	b := make([]byte, 0, len(s))
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	return b
}

// rpcAnswer is a JSON-RPC response with id (JSON text) as the body of an HTTP answer.
func rpcAnswer(status int, id string, result []byte, err error) *api.Response {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = &rpcError{codeInternal, err.Error()}
		}
		b = strconv.AppendInt(append(b, `,"error":{"code":`...), int64(re.code), 10)
		b = jsontext.AppendString(append(b, `,"message":`...), re.msg)
		b = append(b, '}')
	} else {
		b = append(append(b, `,"result":`...), result...)
	}
	b = append(b, '}')
	resp := api.ErrorResponse(status, "")
	resp.Body = b
	resp.Set("Content-Length", strconv.Itoa(len(b)))
	return resp
}
