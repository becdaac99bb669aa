package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteImage: the plot is written where asked, and the report links it relative to its own
// folder, so the default report in docs/ links its plots by their bare names.
func TestWriteImage(t *testing.T) {
	for _, tc := range []struct {
		name, image, evaluation, want string
	}{
		{"learning, the defaults", defaultImage, defaultEvaluation, "evaluation-learning.svg"},
		{"gateway, the defaults", defaultGatewayImage, defaultEvaluation, "evaluation-gateway.svg"},
		{"plot in another folder", "plots/x.svg", "docs/r.md", "../plots/x.svg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range []string{"docs", "plots"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			image := filepath.Join(dir, tc.image)
			link, err := writeImage(image, filepath.Join(dir, tc.evaluation), func(w io.Writer) error {
				_, err := io.WriteString(w, "<svg/>")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if link != tc.want {
				t.Errorf("link %q, want %q", link, tc.want)
			}
			if b, err := os.ReadFile(image); err != nil || string(b) != "<svg/>" {
				t.Errorf("%s: %q, %v; want the plot", tc.image, b, err)
			}
		})
	}
}
