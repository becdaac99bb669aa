package ingest

import (
	"strings"
	"testing"
)

// seeds returns the contents of the table tests' files whose names end in one of exts.
func seeds(exts ...string) []string {
	var out []string
	for _, tc := range loadCases {
		for name, content := range tc.in {
			for _, ext := range exts {
				if strings.HasSuffix(name, ext) && len(content) < 1<<16 {
					out = append(out, content)
				}
			}
		}
	}
	return out
}

// checkParsed asserts the invariants every parser result keeps.
func checkParsed(t *testing.T, file, kind string, skills []Skill, probs []Problem) {
	t.Helper()
	for _, s := range skills {
		if s.Name == "" || s.Description == "" {
			t.Errorf("skill with an empty name or description: %#v", s)
		}
		if s.Name != strings.TrimSpace(s.Name) || s.Description != strings.TrimSpace(s.Description) {
			t.Errorf("untrimmed name or description: %q, %q", s.Name, s.Description)
		}
		if s.Source != file || s.Kind != kind || s.Line < 1 {
			t.Errorf("skill %q: Source %q, Kind %q, Line %d", s.Name, s.Source, s.Kind, s.Line)
		}
	}
	for _, p := range probs {
		if p.File != file || p.Msg == "" || p.Line < 0 {
			t.Errorf("malformed problem %#v", p)
		}
	}
}

func FuzzParseSkillMD(f *testing.F) {
	for _, s := range seeds(".md") {
		f.Add([]byte(s))
	}
	f.Add([]byte(fullSkill))
	f.Add([]byte(crlfSkill))
	f.Fuzz(func(t *testing.T, data []byte) {
		skills, probs := ParseSkillMD(data, "x/SKILL.md")
		if len(skills) > 1 {
			t.Fatalf("%d skills from one file", len(skills))
		}
		if len(skills) == 0 && len(probs) == 0 {
			t.Fatal("no skill and no problem")
		}
		checkParsed(t, "x/SKILL.md", KindSkill, skills, probs)
	})
}

func FuzzParseTools(f *testing.F) {
	for _, s := range seeds(".json", ".jsonl", ".ndjson") {
		f.Add([]byte(s))
	}
	f.Add([]byte(mcpList))
	f.Fuzz(func(t *testing.T, data []byte) {
		skills, probs := ParseTools(data, "t.json")
		checkParsed(t, "t.json", KindTool, skills, probs)
		skills, probs = ParseToolsJSONL(data, "t.jsonl")
		checkParsed(t, "t.jsonl", KindTool, skills, probs)
	})
}
