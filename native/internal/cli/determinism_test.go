package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBuildByteIdentical holds the design's promise: same inputs and options give the same
// artifact bytes, however the library's paths are ordered or repeated.
func TestBuildByteIdentical(t *testing.T) {
	ents, err := os.ReadDir(sampleLib)
	if err != nil {
		t.Fatal(err)
	}
	var dirs, skillFiles []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(sampleLib, e.Name()))
			skillFiles = append(skillFiles, filepath.Join(sampleLib, e.Name(), "SKILL.md"))
		}
	}
	if len(dirs) != sampleCount {
		t.Fatalf("%s has %d skill folders, want %d", sampleLib, len(dirs), sampleCount)
	}
	reversed := slices.Clone(dirs)
	slices.Reverse(reversed)
	shuffled := slices.Clone(skillFiles)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	cases := []struct {
		name string
		libs []string
	}{
		{"directory again", []string{sampleLib}},
		{"directory with trailing slash", []string{sampleLib + "/"}},
		{"directory twice", []string{sampleLib, sampleLib}},
		{"skill folders in order", dirs},
		{"skill folders reversed", reversed},
		{"SKILL.md files shuffled", shuffled},
	}
	dir := t.TempDir()
	want, err := os.ReadFile(buildSample(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A different output name each time: the output path must not leak into the bytes.
			out := filepath.Join(dir, "out"+string(rune('a'+i))+".skg")
			mustRun(t, append(append([]string{"build"}, tc.libs...), "-o", out)...)
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("artifact differs from the first build of %s (%d vs %d bytes)", sampleLib, len(got), len(want))
			}
		})
	}

	// Derived outputs are deterministic too.
	art := buildSample(t)
	for _, format := range []string{"json", "dot", "graphml"} {
		a := mustRun(t, "export", art, "--format", format).stdout
		b := mustRun(t, "export", art, "--format", format).stdout
		if a != b {
			t.Errorf("export --format %s differs between two runs", format)
		}
	}
}
