// Package tracelog turns agent logs into caskg traces: it reads Claude Code session transcripts,
// OpenAI Chat Completions and Responses API logs, MCP JSON-RPC logs and caskg's own trace JSONL,
// and matches the tool and skill names they call against an artifact's skill names (Matcher).
//
// A log file is either one JSON document (an object, or an array of objects) or JSONL; every
// object is classified on its own, so one file may mix formats. Objects of no known format are
// skipped and counted; a line that is not JSON is an error naming the file and line.
package tracelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/caskg/caskg/native/eval"
)

// Format names a log format.
type Format string

const (
	ClaudeCode      Format = "claude-code"
	OpenAIChat      Format = "openai-chat"
	OpenAIResponses Format = "openai-responses"
	MCP             Format = "mcp"
	Caskg           Format = "caskg"
)

// Formats lists the formats in the order reports show them.
func Formats() []Format { return []Format{ClaudeCode, OpenAIChat, OpenAIResponses, MCP, Caskg} }

// A Log is one task or session read from a log: the tool and skill names it called, in call
// order and as the log spells them.
type Log struct {
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

// Parse reads one log file's contents; name names the file in errors and in the ids of logs that
// carry none. It returns the logs in the order they start, and how many objects were of no known
// format.
func Parse(name string, data []byte) ([]Log, int, error) {
	recs, err := splitRecords(data)
	if err != nil {
		return nil, 0, fmt.Errorf("tracelog: %s:%w", name, err)
	}
	p := newParser(name)
	for _, r := range recs {
		if err := p.add(r); err != nil {
			return nil, 0, fmt.Errorf("tracelog: %s:%d: %w", name, r.line, err)
		}
	}
	if len(recs) > 0 && p.skipped == len(recs) {
		return nil, 0, fmt.Errorf("tracelog: %s: no known log format (Claude Code, OpenAI Chat Completions or Responses, MCP JSON-RPC, caskg traces)", name)
	}
	return p.logs, p.skipped, nil
}

// lineError is an error at a line of the file being split.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %v", e.line, e.err) }

// splitRecords splits a file into its objects: those of one JSON document (an object or an
// array of objects), or else those of its lines, where a line may also hold an array.
func splitRecords(data []byte) ([]record, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return splitDocument(data)
	}
	var recs []record
	n, err := eval.EachLine(bytes.NewReader(data), func(line int, b []byte) error {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("not JSON: %w", err)
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
			return errors.New("not a JSON object")
		}
		return nil
	})
	if err != nil {
		return nil, &lineError{n, err}
	}
	return recs, nil
}

// splitDocument splits one valid JSON document, numbering each object by the line it starts on.
func splitDocument(data []byte) ([]record, error) {
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
			return nil, &lineError{start, err}
		}
		return []record{{start, m}}, nil
	}
	if _, err := dec.Token(); err != nil {
		return nil, &lineError{start, err}
	}
	var recs []record
	for dec.More() {
		line := lineAt(dec.InputOffset())
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, &lineError{line, err}
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
	logs       []Log
	sessions   map[string]int // Claude Code and MCP: the index of a session's log, by format and id
	skipped    int
}

func newParser(name string) *parser {
	return &parser{name: name, base: filepath.Base(name), sessions: map[string]int{}}
}

// session returns the log of session id in format f, starting one at line if there is none.
func (p *parser) session(f Format, id string, line int) *Log {
	k := string(f) + "\x00" + id
	i, ok := p.sessions[k]
	if !ok {
		i = len(p.logs)
		p.sessions[k] = i
		p.logs = append(p.logs, Log{Format: f, ID: id, Line: line})
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
	l := Log{Format: Caskg, Line: r.line, Task: str(r.v, "task")}
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
		if name := str(obj(m, "params"), "name"); name != "" {
			l.Calls = append(l.Calls, name)
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
			name := str(b, "name")
			if name == "Skill" {
				in := obj(b, "input")
				s := str(in, "skill")
				if s == "" {
					s = str(in, "command")
				}
				if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s), "/")); len(f) > 0 {
					name = f[0]
				}
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
	l := Log{Format: OpenAIChat, ID: p.apiID(r, resp), Line: r.line}
	calls := func(m map[string]any) {
		for _, c := range list(m, "tool_calls") {
			c, _ := c.(map[string]any)
			if name := str(obj(c, "function"), "name"); name != "" {
				l.Calls = append(l.Calls, name)
			}
		}
		if name := str(obj(m, "function_call"), "name"); name != "" {
			l.Calls = append(l.Calls, name)
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
	l := Log{Format: OpenAIResponses, ID: p.apiID(r, resp), Line: r.line}
	items := func(xs []any) {
		for _, it := range xs {
			it, _ := it.(map[string]any)
			switch str(it, "type") {
			case "function_call", "custom_tool_call", "mcp_call":
				if name := str(it, "name"); name != "" {
					l.Calls = append(l.Calls, name)
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
