package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestQueryFilter holds query's --allow, --deny and --namespace, repeated or comma-separated,
// and a --batch line's own filter, to the engine's filter: nothing they leave out is returned.
func TestQueryFilter(t *testing.T) {
	art := buildSample(t)
	resultNames := func(t *testing.T, out string) []string {
		var resp struct{ Results []queryResult }
		decodeJSON(t, out, &resp)
		var got []string
		for _, r := range resp.Results {
			got = append(got, r.Name)
		}
		return got
	}
	tests := []struct {
		name string
		args []string
		ok   func(name string) bool // every result must pass
	}{
		{"allow", []string{"--allow", "heat-*"}, func(n string) bool { return strings.HasPrefix(n, "heat-") }},
		{"allow comma list", []string{"--allow", "heat-*,*-microwave"}, func(n string) bool { return strings.HasPrefix(n, "heat-") }},
		{"allow repeated", []string{"--allow", "heat-*", "--allow", "verify-*"}, func(n string) bool {
			return strings.HasPrefix(n, "heat-") || strings.HasPrefix(n, "verify-")
		}},
		{"deny", []string{"--deny", "*microwave*", "--deny", "go-*,open-*"}, func(n string) bool {
			return !strings.Contains(n, "microwave") && !strings.HasPrefix(n, "go-") && !strings.HasPrefix(n, "open-")
		}},
		{"deny wins", []string{"--allow", "*object*", "--deny", "*microwave*"}, func(n string) bool {
			return strings.Contains(n, "object") && !strings.Contains(n, "microwave")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resultNames(t, mustRun(t, append([]string{"query", art, sampleQuery, "--json", "-k", "5"}, tt.args...)...).stdout)
			if len(got) == 0 {
				t.Fatalf("%q: no results", tt.args)
			}
			for _, n := range got {
				if !tt.ok(n) {
					t.Errorf("%q: result %s is one the filter leaves out (all: %q)", tt.args, n, got)
				}
			}
		})
	}

	t.Run("no namespace in the sample", func(t *testing.T) {
		// The sample's names have no "__": a namespace leaves every skill out.
		if got := resultNames(t, mustRun(t, "query", art, sampleQuery, "--json", "--namespace", "kitchen").stdout); len(got) != 0 {
			t.Errorf("--namespace kitchen: %q, want no results", got)
		}
	})

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow", "heat-[x"}, `field "filter.allow[0]": '[', ']' and '\' are reserved`},
		{[]string{"--deny", "a*,"}, `field "filter.deny[1]": empty`},
		{[]string{"--namespace", "a__b"}, `field "filter.namespaces[0]": a namespace has no "__"`},
		{[]string{"--allow", strings.Repeat("a", 257)}, `field "filter.allow[0]": 257 bytes, at most 256`},
	} {
		r := run(t, append([]string{"query", art, sampleQuery}, bad.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "flags --allow, --deny, --namespace: ") || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("query %q: exit %d, stderr %q; want a usage error with %q", bad.args, r.code, r.stderr, bad.want)
		}
	}

	t.Run("batch", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "tasks.jsonl")
		lines := `{"id": "a", "query": "heat an egg", "filter": {"allow": ["heat-*"]}}
{"id": "b", "query": "heat an egg"}
{"id": "c", "query": "heat an egg", "filter": {"tags": ["x"]}}
{"id": "d", "query": "heat an egg", "filter": {"deny": ["[x"]}}
`
		if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		// The command line's filter applies to the lines without their own.
		r := run(t, "query", art, "--batch", p, "--json", "-k", "3", "--deny", "heat-object-in-*")
		out := parseBatch(t, r.stdout)
		if r.code != 1 || len(out) != 4 {
			t.Fatalf("exit %d, %d lines; want 1 (two bad lines) and 4:\n%s%s", r.code, len(out), r.stdout, r.stderr)
		}
		for _, n := range out[0].Results {
			if !strings.HasPrefix(n.Name, "heat-") {
				t.Errorf("line a: %s is not allowed by its filter", n.Name)
			}
		}
		if !slices.ContainsFunc(out[0].Results, func(r queryResult) bool { return r.Name == "heat-object-in-microwave" }) {
			t.Errorf("line a: its own filter replaces the command line's, want heat-object-in-microwave: %+v", out[0].Results)
		}
		for _, r := range out[1].Results {
			if strings.HasPrefix(r.Name, "heat-object-in-") {
				t.Errorf("line b: %s is denied by --deny", r.Name)
			}
		}
		if !strings.Contains(out[2].Error, `field "filter": json: unknown field "tags"`) {
			t.Errorf("line c: error %q, want the unknown field named", out[2].Error)
		}
		if !strings.Contains(out[3].Error, `field "filter.deny[0]"`) {
			t.Errorf("line d: error %q, want the bad glob named", out[3].Error)
		}
	})
}
