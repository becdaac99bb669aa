package tracelog

import (
	"bytes"
	"testing"
)

// fuzzFormat fuzzes parseFile and, on every object the input splits into, the parser of one
// format whatever the object's shape: neither may panic, and parseFile's logs must be of a known
// format. The corpus is the format's fixture, whole and line by line.
func fuzzFormat(f *testing.F, fixture string, parse func(p *parser, r record)) {
	data := readFixture(f, fixture)
	f.Add(data)
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parsed, err := parseFile("f", data)
		if err != nil {
			return
		}
		for _, l := range parsed.Logs {
			switch l.Format {
			case ClaudeCode, Codex, OpenAIChat, OpenAIResponses, MCP, Caskg:
			default:
				t.Fatalf("log of unknown format %q", l.Format)
			}
		}
		for _, p := range parsed.Problems {
			if p.Line < 1 || p.File != "f" {
				t.Fatalf("problem without a line: %+v", p)
			}
		}
		recs, _ := splitRecords(data)
		p := newParser("f")
		for _, r := range recs {
			parse(p, r)
		}
		m := NewMatcher([]string{"go-to-location"})
		for _, l := range p.logs {
			for _, c := range l.Calls {
				m.Match(c)
			}
		}
	})
}

func FuzzClaudeCode(f *testing.F) {
	fuzzFormat(f, "claude-code.jsonl", (*parser).claude)
}

func FuzzOpenAIChat(f *testing.F) {
	fuzzFormat(f, "openai-chat.jsonl", func(p *parser, r record) {
		req, resp := unwrap(r.v)
		p.chat(r, req, resp)
	})
}

func FuzzOpenAIResponses(f *testing.F) {
	fuzzFormat(f, "openai-responses.json", func(p *parser, r record) {
		req, resp := unwrap(r.v)
		p.responses(r, req, resp)
	})
}

func FuzzMCP(f *testing.F) {
	fuzzFormat(f, "mcp.jsonl", func(p *parser, r record) {
		p.mcp(r, r.v)
		if m := obj(r.v, "message"); m != nil {
			p.mcp(r, m)
		}
	})
}

func FuzzCodex(f *testing.F) {
	fuzzFormat(f, "codex.jsonl", (*parser).codex)
}

func FuzzCaskgTraces(f *testing.F) {
	fuzzFormat(f, "caskg.jsonl", func(p *parser, r record) { _ = p.caskg(r) })
}

// FuzzMatch checks that a normalized match is a skill whose key is that of the name or of a
// name less its prefixes.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"go_to_location", "mcp__k__goToLocation", "a/b:c.d__e", "__", "Ü.ß"} {
		f.Add(s)
	}
	m := NewMatcher(skills)
	f.Fuzz(func(t *testing.T, name string) {
		s, how := m.Match(name)
		if how == Normalized {
			ok := false
			for _, c := range candidates(name) {
				ok = ok || key(c) == key(s)
			}
			if !ok {
				t.Fatalf("Match(%q) = %q: no candidate has its key", name, s)
			}
		}
	})
}
