package ingest

import (
	"maps"
	"os"
	"strings"
	"testing"
)

// The shared data sits beside the project; it is read in place, never copied.
const (
	realSkills = "../../../../shared/data/skills"
	realTools  = "../../../../shared/data/eval/toollinkos/tools.json"
)

func TestRealLibrary(t *testing.T) {
	for _, p := range []string{realSkills, realTools} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("real data not available: %v", err)
		}
	}
	lib, err := Load(realSkills, realTools)
	if err != nil {
		t.Fatal(err)
	}
	// Real libraries break the Agent Skills spec: names off its convention ("FFmpeg Video
	// Editing", "data_cleaning") or unlike their folder, long descriptions, a compatibility
	// written as a map. Those skills are kept with a warning. Nothing else is wrong.
	kinds := map[string]int{}
	for _, p := range lib.Problems {
		kind := ""
		switch {
		case !p.Warning:
		case strings.Contains(p.Msg, "Agent Skills convention"):
			kind = "convention"
		case strings.Contains(p.Msg, "differs from its folder"):
			kind = "folder"
		case strings.Contains(p.Msg, "more than the Agent Skills spec's 1024"):
			kind = "description"
		case p.Field == "compatibility":
			kind = "compatibility"
		}
		if kind == "" {
			t.Errorf("problem: %v", p)
		}
		kinds[kind]++
	}
	if want := map[string]int{"convention": 48, "folder": 13, "description": 2, "compatibility": 2}; !maps.Equal(kinds, want) {
		t.Errorf("warnings by kind %v, want %v", kinds, want)
	}
	count := map[string]int{}
	for _, s := range lib.Skills {
		count[s.Kind]++
		switch s.Kind {
		case KindSkill:
			if !strings.HasPrefix(s.Source, "data/skills/") || !strings.HasSuffix(s.Source, "/SKILL.md") || s.Path != realSkills+strings.TrimPrefix(s.Source, "data/skills") || s.Line != 1 {
				t.Errorf("skill %q: Source %q, Path %q, Line %d", s.Name, s.Source, s.Path, s.Line)
			}
		case KindTool:
			if s.Source != "data/eval/toollinkos/tools.json" || s.Path != realTools || s.Line < 2 || s.SchemaText == "" && len(s.Inputs) > 0 {
				t.Errorf("tool %q: Source %q, Line %d", s.Name, s.Source, s.Line)
			}
		}
	}
	if count[KindSkill] != 859 || count[KindTool] != 573 {
		t.Errorf("read %d skills and %d tools, want 859 and 573", count[KindSkill], count[KindTool])
	}
}

func BenchmarkLoadRealSkills(b *testing.B) {
	if _, err := os.Stat(realSkills); err != nil {
		b.Skipf("real data not available: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(realSkills); err != nil {
			b.Fatal(err)
		}
	}
}
