package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/ingest"
)

// TestPeerText: the peers' text per skill holds the fields score.py's BM25 indexes, one per line,
// empty ones left out, cut to 4,000 characters (not bytes).
func TestPeerText(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for _, tc := range []struct {
		name  string
		skill ingest.Skill
		want  string
	}{
		{"name and description", ingest.Skill{Name: "pdf", Description: "Read PDF files."}, "pdf\nRead PDF files."},
		{"every field", ingest.Skill{Name: "csv-join", Title: "CSV join", Description: "Join two CSV files.",
			Inputs:  []ingest.Field{{Name: "left_file", Type: "path", Description: "first  table"}},
			Outputs: []ingest.Field{{Name: "joined"}}, Tags: []string{"data", "csv"}, SchemaText: "key column",
			Body: "  Use pandas.\n\nThen save.  "},
			"csv-join\nCSV join\nJoin two CSV files.\nleft file path first table\njoined\ndata csv\nkey column\nUse pandas.\n\nThen save."},
		{"cut to 4,000 characters", ingest.Skill{Name: "x", Description: "d", Body: long}, "x\nd\n" + long[:2*3996]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PeerText(tc.skill); got != tc.want {
				t.Errorf("PeerText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFirstWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 12, ""},
		{"  one\ttwo\n\nthree ", 12, "one two three"},
		{"a b c d e f g h i j k l m n", 12, "a b c d e f g h i j k l"},
		{"a b c", 2, "a b"},
	} {
		if got := firstWords(tc.in, tc.n); got != tc.want {
			t.Errorf("firstWords(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestLibraries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"real,10000,100000", []int{0, 10000, 100000}, false},
		{" real ", []int{0}, false},
		{"", nil, false},
		{"10000,0", nil, true},
		{"ten", nil, true},
	} {
		got, err := libraries(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("libraries(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
