// Package tracelog turns agent logs into caskg traces: it reads Claude Code session transcripts,
// Codex CLI session logs, OpenAI Chat Completions and Responses API logs, MCP JSON-RPC logs and
// caskg's own trace JSONL, and matches the tool and skill names they call against an artifact's
// skill names (Matcher).
//
// A log file is either one JSON document (an object, or an array of objects) or JSONL; every
// object is classified on its own, so one file may mix formats. Objects of no known format are
// skipped and counted. A line that is not JSON, or a record that breaks its format's rules, is a
// Problem naming the file and line: the record is left out and the rest of the file is read.
//
// A call counts as the skill it uses, not only as the tool it names: Claude Code's Skill tool
// as the skill it names, a get_skill call (caskg's MCP tool, under any server prefix) as the
// skill in its "name" argument, and a file read or shell command that opens a .../NAME/SKILL.md
// as NAME.
package tracelog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/caskg/caskg/native/internal/lines"
)

// Format names a log format.
type Format string

const (
	ClaudeCode      Format = "claude-code"
	OpenAIChat      Format = "openai-chat"
	OpenAIResponses Format = "openai-responses"
	MCP             Format = "mcp"
	Codex           Format = "codex"
	Caskg           Format = "caskg"
)

// formats lists the formats in the order reports show them.
func formats() []Format { return []Format{ClaudeCode, Codex, OpenAIChat, OpenAIResponses, MCP, Caskg} }

// A taskLog is one task or session read from a log: the tool and skill names it called, in call
// order and as the log spells them.
type taskLog struct {
	Format Format
	ID     string
	Task   string
	Line   int // where it starts
	Calls  []string
}

// record is one JSON object of a log file and the line it starts on.
type record struct {
	line int
	v    map[string]any
}

// Problem is a record of a log file that could not be read: it is left out, and the rest of the
// file is read.
type Problem struct {
	File string
	Line int
	Err  string
}

func (p Problem) Error() string { return fmt.Sprintf("tracelog: %s:%d: %s", p.File, p.Line, p.Err) }

// parsedFile is what parseFile read from one file.
type parsedFile struct {
	Logs     []taskLog // in the order they start
	Skipped  int       // objects of no known format
	Problems []Problem // records left out, in file order
}

// parseFile reads one log file's contents; name names the file in problems, errors and the ids of
// logs that carry none. A bad record is a Problem and the rest is read; a file with records,
// none of them of a known format, is an error.
func parseFile(name string, data []byte) (*parsedFile, error) {
	recs, bad := splitRecords(data)
	p := newParser(name)
	out := &parsedFile{}
	for _, l := range bad {
		out.Problems = append(out.Problems, Problem{name, l.line, l.err.Error()})
	}
	for _, r := range recs {
		if err := p.add(r); err != nil {
			out.Problems = append(out.Problems, Problem{name, r.line, err.Error()})
		}
	}
	slices.SortStableFunc(out.Problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	if len(recs) > 0 && p.skipped == len(recs) {
		return nil, fmt.Errorf("tracelog: %s: no known log format (Claude Code, Codex CLI, OpenAI Chat Completions or Responses, MCP JSON-RPC, caskg traces)", name)
	}
	if len(recs) == 0 && len(bad) > 0 {
		lines := "lines"
		if len(bad) == 1 {
			lines = "line"
		}
		return nil, fmt.Errorf("tracelog: %s: no JSON record (%d bad %s; the first: %d: %v)", name, len(bad), lines, bad[0].line, bad[0].err)
	}
	out.Logs, out.Skipped = p.logs, p.skipped
	return out, nil
}

// lineError is an error at a line of the file being split.
type lineError struct {
	line int
	err  error
}

// splitRecords splits a file into its objects: those of one JSON document (an object or an
// array of objects), or else those of its lines, where a line may also hold an array. A line
// that is not JSON, or not an object or array, is left out and returned among the bad ones.
func splitRecords(data []byte) ([]record, []lineError) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return splitDocument(data)
	}
	var recs []record
	var bad []lineError
	n, err := lines.Each(bytes.NewReader(data), func(line int, b []byte) error {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			bad = append(bad, lineError{line, fmt.Errorf("not JSON: %w", err)})
			return nil
		}
		switch v := v.(type) {
		case map[string]any:
			recs = append(recs, record{line, v})
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					recs = append(recs, record{line, m})
				}
			}
		default:
			bad = append(bad, lineError{line, errors.New("not a JSON object")})
		}
		return nil
	})
	if err != nil { // a line over lines.Each's limit: what follows cannot be split
		bad = append(bad, lineError{n, err})
	}
	return recs, bad
}

// splitDocument splits one valid JSON document, numbering each object by the line it starts on.
func splitDocument(data []byte) ([]record, []lineError) {
	lineAt := func(off int64) int {
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		return 1 + bytes.Count(data[:off], []byte("\n"))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	start := lineAt(0)
	if bytes.TrimSpace(data)[0] == '{' {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, []lineError{{start, err}}
		}
		return []record{{start, m}}, nil
	}
	if _, err := dec.Token(); err != nil {
		return nil, []lineError{{start, err}}
	}
	var recs []record
	for dec.More() {
		line := lineAt(dec.InputOffset())
		var v any
		if err := dec.Decode(&v); err != nil { // unreachable for a valid document; kept for safety
			return recs, []lineError{{line, err}}
		}
		if m, ok := v.(map[string]any); ok {
			recs = append(recs, record{line, m})
		}
	}
	return recs, nil
}

// parser collects the logs of one file.
type parser struct {
	name, base string
	logs       []taskLog
	sessions   map[string]int // Claude Code, Codex and MCP: the index of a session's log, by format and id
	codexID    string         // the session id of the file's Codex session_meta record, if any
	skipped    int
}

func newParser(name string) *parser {
	return &parser{name: name, base: filepath.Base(name), sessions: map[string]int{}}
}

// session returns the log of session id in format f, starting one at line if there is none.
func (p *parser) session(f Format, id string, line int) *taskLog {
	k := string(f) + "\x00" + id
	i, ok := p.sessions[k]
	if !ok {
		i = len(p.logs)
		p.sessions[k] = i
		p.logs = append(p.logs, taskLog{Format: f, ID: id, Line: line})
	}
	return &p.logs[i]
}

// add classifies one object and adds what it calls.
func (p *parser) add(r record) error {
	v := r.v
	if _, ok := v["skills"]; ok {
		return p.caskg(r)
	}
	if _, ok := v["jsonrpc"]; ok || (str(v, "method") != "" && obj(v, "params") != nil) {
		p.mcp(r, v)
		return nil
	}
	if m := obj(v, "message"); m != nil {
		if _, ok := m["jsonrpc"]; ok {
			p.mcp(r, m)
			return nil
		}
	}
	if t := str(v, "type"); str(v, "sessionId") != "" || ((t == "user" || t == "assistant") && obj(v, "message") != nil) {
		p.claude(r)
		return nil
	}
	if isCodex(v) {
		p.codex(r)
		return nil
	}
	req, resp := unwrap(v)
	switch {
	case list(req, "messages") != nil || list(resp, "choices") != nil:
		p.chat(r, req, resp)
	case list(resp, "output") != nil || req["input"] != nil:
		p.responses(r, req, resp)
	default:
		p.skipped++
	}
	return nil
}

// caskg passes one caskg trace through.
func (p *parser) caskg(r record) error {
	skills, ok := r.v["skills"].([]any)
	if !ok {
		return errors.New(`field "skills" is not an array of names`)
	}
	l := taskLog{Format: Caskg, Line: r.line, Task: str(r.v, "task")}
	switch id := r.v["id"].(type) {
	case string:
		l.ID = id
	case nil:
		l.ID = fmt.Sprintf("%s:%d", p.base, r.line)
	default:
		b, _ := json.Marshal(id)
		l.ID = string(b)
	}
	for i, s := range skills {
		name, ok := s.(string)
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf(`field "skills": entry %d is not a name`, i+1)
		}
		l.Calls = append(l.Calls, name)
	}
	p.logs = append(p.logs, l)
	return nil
}

// mcp adds one JSON-RPC message m (r.v wraps it or is it): a tools/call request is a call of
// params.name. A file is one session, or one per session id where the log records one.
func (p *parser) mcp(r record, m map[string]any) {
	id := p.base
	for _, k := range []string{"sessionId", "session_id", "session"} {
		if s := str(r.v, k); s != "" {
			id = s
			break
		}
	}
	l := p.session(MCP, id, r.line)
	if str(m, "method") == "tools/call" {
		params := obj(m, "params")
		if name := str(params, "name"); name != "" {
			l.Calls = append(l.Calls, uses(name, obj(params, "arguments")))
		}
	}
}

// claude adds one event of a Claude Code transcript to its session's log: an assistant
// message's tool_use blocks are calls, the Skill tool's call counting as one of the skill it
// names, and the first user text is the task.
func (p *parser) claude(r record) {
	id := str(r.v, "sessionId")
	if id == "" {
		id = p.base
	}
	l := p.session(ClaudeCode, id, r.line)
	msg := obj(r.v, "message")
	if msg == nil || r.v["isMeta"] == true {
		return
	}
	role := str(msg, "role")
	if role == "" {
		role = str(r.v, "type")
	}
	switch role {
	case "user":
		if l.Task == "" {
			l.Task = text(msg["content"])
		}
	case "assistant":
		for _, b := range list(msg, "content") {
			b, _ := b.(map[string]any)
			if str(b, "type") != "tool_use" {
				continue
			}
			name, in := str(b, "name"), obj(b, "input")
			if name == "Skill" {
				// "skill" holds the skill's name, which may have spaces ("Automatic Speech
				// Recognition (ASR)"); "command" (older versions) a slash command and its
				// arguments, whose first word is the name.
				if s := strings.TrimSpace(str(in, "skill")); s != "" {
					name = strings.TrimPrefix(s, "/")
				} else if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(str(in, "command")), "/")); len(f) > 0 {
					name = f[0]
				}
			} else {
				name = uses(name, in)
			}
			if name != "" {
				l.Calls = append(l.Calls, name)
			}
		}
	}
}

// unwrap finds the request and response of a logged API exchange: the object itself, or its
// "request" and "response" (each possibly under "body", as in the Batch API's output).
func unwrap(v map[string]any) (req, resp map[string]any) {
	req, resp = v, v
	if r := obj(v, "request"); r != nil {
		req = r
		if b := obj(r, "body"); b != nil {
			req = b
		}
	}
	if r := obj(v, "response"); r != nil {
		resp = r
		if b := obj(r, "body"); b != nil {
			resp = b
		}
	}
	return req, resp
}

// apiID is the id of one logged exchange: the response's, the batch request's custom id, or
// the file and line.
func (p *parser) apiID(r record, resp map[string]any) string {
	for _, s := range []string{str(resp, "id"), str(r.v, "custom_id"), str(r.v, "id")} {
		if s != "" {
			return s
		}
	}
	return fmt.Sprintf("%s:%d", p.base, r.line)
}

// chat adds one Chat Completions exchange: the tool calls of the conversation's assistant
// messages, then those of the first choice; the task is the first user message.
func (p *parser) chat(r record, req, resp map[string]any) {
	l := taskLog{Format: OpenAIChat, ID: p.apiID(r, resp), Line: r.line}
	calls := func(m map[string]any) {
		for _, c := range list(m, "tool_calls") {
			c, _ := c.(map[string]any)
			fn := obj(c, "function")
			if name := str(fn, "name"); name != "" {
				l.Calls = append(l.Calls, uses(name, arguments(fn["arguments"])))
			}
		}
		fn := obj(m, "function_call")
		if name := str(fn, "name"); name != "" {
			l.Calls = append(l.Calls, uses(name, arguments(fn["arguments"])))
		}
	}
	for _, m := range list(req, "messages") {
		m, _ := m.(map[string]any)
		switch str(m, "role") {
		case "user":
			if l.Task == "" {
				l.Task = text(m["content"])
			}
		case "assistant":
			calls(m)
		}
	}
	if ch := list(resp, "choices"); len(ch) > 0 {
		c, _ := ch[0].(map[string]any)
		calls(obj(c, "message"))
	}
	p.logs = append(p.logs, l)
}

// responses adds one Responses API exchange: the function calls among the input items, then
// among the output items; the task is the input text or its first user message.
func (p *parser) responses(r record, req, resp map[string]any) {
	l := taskLog{Format: OpenAIResponses, ID: p.apiID(r, resp), Line: r.line}
	items := func(xs []any) {
		for _, it := range xs {
			it, _ := it.(map[string]any)
			switch str(it, "type") {
			case "function_call", "custom_tool_call", "mcp_call":
				if name := str(it, "name"); name != "" {
					l.Calls = append(l.Calls, uses(name, arguments(it["arguments"])))
				}
			}
			if str(it, "role") == "user" && l.Task == "" {
				l.Task = text(it["content"])
			}
		}
	}
	switch in := req["input"].(type) {
	case string:
		l.Task = strings.TrimSpace(in)
	case []any:
		items(in)
	}
	items(list(resp, "output"))
	p.logs = append(p.logs, l)
}

// codexTypes are the record types of a Codex CLI session log ("rollout" JSONL): each record is
// {"timestamp", "type", "payload"}.
var codexTypes = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true}

// codexItems are the response item types that Codex CLI's older logs write as records of their
// own, without the envelope; call_id tells them from a Responses API object.
var codexItems = map[string]bool{"function_call": true, "custom_tool_call": true, "local_shell_call": true}

func isCodex(v map[string]any) bool {
	t := str(v, "type")
	if codexTypes[t] && obj(v, "payload") != nil {
		return true
	}
	return codexItems[t] && str(v, "call_id") != ""
}

// codex adds one record of a Codex CLI session log to the file's session: function, custom tool
// and shell calls are calls, and the first user text that is not the environment or instructions
// preamble (the XML-tagged blocks Codex sends first) is the task.
func (p *parser) codex(r record) {
	item := r.v
	if pl := obj(r.v, "payload"); pl != nil {
		item = pl
	}
	if str(r.v, "type") == "session_meta" {
		if id := str(item, "id"); id != "" && p.codexID == "" {
			p.codexID = id
		}
	}
	id := p.codexID
	if id == "" {
		id = p.base
	}
	l := p.session(Codex, id, r.line)
	switch str(item, "type") {
	case "message":
		if str(item, "role") == "user" && l.Task == "" {
			if t := text(item["content"]); t != "" && !strings.HasPrefix(t, "<") {
				l.Task = t
			}
		}
	case "user_message": // an event_msg payload
		if t := strings.TrimSpace(str(item, "message")); l.Task == "" && t != "" && !strings.HasPrefix(t, "<") {
			l.Task = t
		}
	case "function_call", "custom_tool_call":
		if name := str(item, "name"); name != "" {
			args := arguments(item["arguments"])
			if args == nil {
				args = map[string]any{"input": item["input"]}
			}
			l.Calls = append(l.Calls, uses(name, args))
		}
	case "local_shell_call":
		if s := skillFile(obj(item, "action")["command"]); s != "" {
			l.Calls = append(l.Calls, s)
		} else {
			l.Calls = append(l.Calls, "local_shell")
		}
	}
}

// maxArguments bounds the arguments string of a logged call that is decoded to look for a
// skill name: larger ones are not a get_skill or a file read.
const maxArguments = 64 << 10

// arguments decodes a logged call's arguments: an object, or a JSON string holding one (the
// OpenAI APIs and Codex write them as strings). Anything else is nil.
func arguments(v any) map[string]any {
	switch a := v.(type) {
	case map[string]any:
		return a
	case string:
		if len(a) > maxArguments {
			return nil
		}
		var m map[string]any
		if json.Unmarshal([]byte(a), &m) == nil {
			return m
		}
	}
	return nil
}

// uses is the name a call of tool name with arguments args counts as: the skill a get_skill
// call asks for, the skill whose SKILL.md a file read or shell command opens, or else the tool.
func uses(name string, args map[string]any) string {
	if c := candidates(name); strings.EqualFold(c[len(c)-1], "get_skill") {
		if s := strings.TrimSpace(str(args, "name")); s != "" {
			return s
		}
	}
	for _, k := range []string{"file_path", "path", "command", "cmd", "input"} {
		if s := skillFile(args[k]); s != "" {
			return s
		}
	}
	return name
}

// skillFilePath finds a path to a SKILL.md file; its folder names the skill.
var skillFilePath = regexp.MustCompile(`([^/\\\s"'=]+)[/\\]SKILL\.md\b`)

// skillFile is the folder of the first SKILL.md a path, command line or list of arguments
// names, or "".
func skillFile(v any) string {
	var s string
	switch a := v.(type) {
	case string:
		s = a
	case []any:
		var parts []string
		for _, x := range a {
			if t, ok := x.(string); ok {
				parts = append(parts, t)
			}
		}
		s = strings.Join(parts, " ")
	}
	if len(s) > maxArguments {
		s = s[:maxArguments]
	}
	if m := skillFilePath.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// text is the text of message content: a string, or the first text part of a list of parts.
func text(content any) string {
	switch c := content.(type) {
	case string:
		return strings.TrimSpace(c)
	case []any:
		for _, part := range c {
			part, _ := part.(map[string]any)
			switch str(part, "type") {
			case "text", "input_text":
				if s := strings.TrimSpace(str(part, "text")); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

func list(m map[string]any, k string) []any {
	l, _ := m[k].([]any)
	return l
}
