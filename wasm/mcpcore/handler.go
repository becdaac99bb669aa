package mcpcore

import (
	"context"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// Options configure a Handler.
type Options struct {
	Version   string                // the server version in serverInfo
	Artifact  string                // the artifact's name in graph_info
	Feedback  service.FeedbackStore // keeps report_skill_use's reports; nil: feedback is off
	Reporters service.FeedbackAuth  // who may report, by the request's Authorization header
}

// Handler serves the tools as MCP over streamable HTTP, stateless and with JSON responses: each
// POST carries one JSON-RPC message; a request gets its response as the body (200), a
// notification or a response gets 202. There is no session and no server-sent stream (GET
// answers 405), which is all a tool server needs and fits a worker isolate.
type Handler struct {
	core *Core
	opt  Options
}

// New returns a handler over eng's graph.
func New(eng *engine.Engine, opt Options) *Handler {
	return &Handler{core: NewCore(eng), opt: opt}
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
func (h *Handler) Serve(r *service.Request) (resp *service.Response) {
	resp = &service.Response{}
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
		r := service.ErrorResponse(405, "mcpcore: "+r.Method+" /mcp: this server is stateless and keeps no stream; send JSON-RPC messages by POST")
		r.Set("Allow", "POST, OPTIONS")
		return r
	}
	if r.ContentLength > service.MaxBodyBytes {
		return rpcAnswer(413, "null", nil, &rpcError{codeInvalidRequest, "mcpcore: body over " + strconv.Itoa(service.MaxBodyBytes) + " bytes"})
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r.Body, service.MaxBodyBytes+1)); err != nil {
			return rpcAnswer(400, "null", nil, &rpcError{codeParse, "mcpcore: reading the body: " + err.Error()})
		}
	}
	if len(body) > service.MaxBodyBytes {
		return rpcAnswer(413, "null", nil, &rpcError{codeInvalidRequest, "mcpcore: body over " + strconv.Itoa(service.MaxBodyBytes) + " bytes"})
	}
	if i := jsontext.InvalidUTF8(body); i >= 0 {
		return rpcAnswer(400, "null", nil, &rpcError{codeParse, "mcpcore: body not valid UTF-8 at byte " + strconv.Itoa(i)})
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
			resp = rpcAnswer(200, msg.id, nil, &rpcError{codeInternal, "mcpcore: internal error: " + errtext.Recovered(p)})
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
		return m, &rpcError{codeInvalidRequest, "mcpcore: want one JSON-RPC message, an object (batches are not taken)"}
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
		return m, &rpcError{codeParse, "mcpcore: " + err.Error()}
	}
	switch {
	case isResponse:
		m.id = ""
	case m.method == "":
		return m, &rpcError{codeInvalidRequest, `mcpcore: no "method"`}
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

func (h *Handler) call(r *service.Request, m message, body []byte) ([]byte, error) {
	switch m.method {
	case "initialize":
		want, err := stringParam(body, "protocolVersion")
		if err != nil {
			return nil, &rpcError{codeInvalidParams, "mcpcore: initialize: " + err.Error()}
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
			return nil, &rpcError{codeInvalidParams, "mcpcore: tools/call: " + err.Error()}
		}
		if _, ok := lookup(name); !ok {
			return nil, &rpcError{codeInvalidParams, "unknown tool " + strconv.Quote(service.Echo(name))}
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
			return nil, &rpcError{codeInvalidParams, "mcpcore: tools/call: " + err.Error()}
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
	return nil, &rpcError{codeNoMethod, "mcpcore: method " + strconv.Quote(service.Echo(m.method)) + " is not served here (initialize, ping, tools/list, tools/call)"}
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
func (h *Handler) tool(r *service.Request, name string, body []byte) (string, []byte, error) {
	switch name {
	case Retrieve:
		a, given, err := decodeRetrieve(body)
		if err != nil {
			return "", nil, err
		}
		text, out, err := h.core.Retrieve(a, given...)
		if err != nil {
			return "", nil, err
		}
		return text, appendRetrieve(nil, out), nil
	case GetSkill, Neighbors:
		a, err := decodeName(body, name)
		if err != nil {
			return "", nil, err
		}
		if name == GetSkill {
			return h.getSkill(a.Name)
		}
		text, out, err := h.core.Neighbors(a)
		if err != nil {
			return "", nil, err
		}
		return text, appendNeighbors(nil, out), nil
	case GraphInfo:
		if err := arguments(body, func(d *jsontext.Decoder, k string) error {
			return errors.New(`field "` + service.Echo(k) + `": unknown; graph_info takes no arguments`)
		}); err != nil {
			return "", nil, err
		}
		b := appendInfo(nil, h.core.Info(h.opt.Artifact, nil), h.core.g.Params())
		return string(b), b, nil
	default:
		return h.report(r, body)
	}
}

// decodeRetrieve reads retrieve_skills' arguments from the tools/call in body, and which of
// them were given where 0 is out of range rather than the default (k).
func decodeRetrieve(body []byte) (RetrieveArgs, []string, error) {
	var a RetrieveArgs
	seen := false
	var given []string
	err := arguments(body, func(d *jsontext.Decoder, k string) error {
		var err error
		switch k {
		case "query":
			a.Query, err = d.String()
			seen = true
		case "k":
			a.K, err = intArg(d, k)
			given = append(given, k)
		case "skill_budget":
			a.SkillBudget, err = intArg(d, k)
		case "total_budget":
			a.TotalBudget, err = intArg(d, k)
		case "render":
			var render bool
			render, err = d.Bool()
			a.Render = &render
		case "no_graph":
			a.NoGraph, err = d.Bool()
		case "no_memory":
			a.NoMemory, err = d.Bool()
		case "min_score":
			a.MinScore, err = d.Float(64)
		case "allow":
			a.Allow, err = stringList(d)
		case "deny":
			a.Deny, err = stringList(d)
		case "namespaces":
			a.Namespaces, err = stringList(d)
		default:
			return errors.New(`field "` + service.Echo(k) + `": unknown; the arguments are in the tool's input schema`)
		}
		return err
	})
	switch {
	case err != nil:
		return a, nil, err
	case !seen:
		return a, nil, errors.New(`field "query": missing`)
	}
	return a, given, nil
}

// decodeName reads the arguments of get_skill or skill_neighbors (tool), which takes a limit too.
func decodeName(body []byte, tool string) (NeighborsArgs, error) {
	var a NeighborsArgs
	seen := false
	err := arguments(body, func(d *jsontext.Decoder, k string) error {
		var err error
		switch {
		case k == "name":
			a.Name, err = d.String()
			seen = true
		case k == "limit" && tool == Neighbors:
			a.Limit, err = intArg(d, "limit")
		default:
			return errors.New(`field "` + service.Echo(k) + `": unknown; the arguments are in the tool's input schema`)
		}
		return err
	})
	if err == nil && !seen {
		err = errors.New(`field "name": missing`)
	}
	return a, err
}

// decodeReport reads report_skill_use's arguments.
func decodeReport(body []byte) (ReportArgs, error) {
	var a ReportArgs
	err := arguments(body, func(d *jsontext.Decoder, k string) error {
		var err error
		switch k {
		case "query":
			a.Query, err = d.String()
		case "outcome":
			a.Outcome, err = d.String()
		case "used":
			a.Used, err = stringList(d)
		default:
			return errors.New(`field "` + service.Echo(k) + `": unknown; the arguments are in the tool's input schema`)
		}
		return err
	})
	return a, err
}

func (h *Handler) getSkill(name string) (string, []byte, error) {
	id, err := h.core.names.Lookup(name)
	if err != nil {
		return "", nil, err
	}
	full, out := h.core.Head(id, NoLibrary)
	return full, appendSkillText(nil, out), nil
}

func (h *Handler) report(r *service.Request, body []byte) (string, []byte, error) {
	a, err := decodeReport(body)
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
	source, err := h.opt.Reporters.Check(auth)
	if err != nil {
		return "", nil, errors.New(NotRecorded + err.Error())
	}
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	text, out, err := h.core.Report(ctx, h.opt.Feedback, a, source)
	if err != nil {
		return "", nil, err
	}
	return text, appendFeedback(nil, out), nil
}

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
func rpcAnswer(status int, id string, result []byte, err error) *service.Response {
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
	resp := service.ErrorResponse(status, "")
	resp.Body = b
	resp.Set("Content-Length", strconv.Itoa(len(b)))
	return resp
}
