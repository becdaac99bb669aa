package ingest

import (
	"os"
	"strings"
	"testing"
)

// The shared data sits beside the project; it is read in place, never copied.
const (
	realSkills = "../../../shared/data/skills"
	realTools  = "../../../shared/data/eval/toollinkos/tools.json"
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
	// Real libraries break the Agent Skills name convention ("FFmpeg Video Editing",
	// "data_cleaning"); those skills are kept with a warning. Nothing else is wrong.
	conventions := 0
	for _, p := range lib.Problems {
		if p.Warning && p.Field == "name" && strings.Contains(p.Msg, "Agent Skills convention") {
			conventions++
			continue
		}
		t.Errorf("problem: %v", p)
	}
	if conventions != 48 {
		t.Errorf("%d names break the Agent Skills convention, want 48", conventions)
	}
	count := map[string]int{}
	for _, s := range lib.Skills {
		count[s.Kind]++
		switch s.Kind {
		case KindSkill:
			if !strings.HasPrefix(s.Source, realSkills+"/") || !strings.HasSuffix(s.Source, "/SKILL.md") || s.Line != 1 {
				t.Errorf("skill %q: Source %q, Line %d", s.Name, s.Source, s.Line)
			}
		case KindTool:
			if s.Source != realTools || s.Line < 2 || s.SchemaText == "" && len(s.Inputs) > 0 {
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
