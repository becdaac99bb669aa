package learn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// caskgBuild runs `caskg build DIR/catalog.json [--traces DIR/traces.jsonl] -o OUT --quiet`, the
// invocation the loop's graph equals, and returns the artifact. With rotated trace files, the
// traces are those of `cat DIR/traces.[0-9]*.jsonl DIR/traces.jsonl`. The test binary is the
// executable for both, so the build state's code id (which a real gateway and a caskg of
// another build would not share) plays no part.
func caskgBuild(t testing.TB, dir string, traces bool) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cli.skg")
	args := []string{"build", filepath.Join(dir, learn.CatalogFile), "-o", out, "--quiet", "--json"}
	if traces {
		path := filepath.Join(dir, learn.TracesFile)
		if rotated, _ := filepath.Glob(filepath.Join(dir, "traces.[0-9]*.jsonl")); len(rotated) > 0 {
			var all []byte
			for _, p := range append(rotated, path) {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, data...)
			}
			path = filepath.Join(t.TempDir(), "all.jsonl")
			if err := os.WriteFile(path, all, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = append(args, "--traces", path)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("caskg %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// toolLinkOS returns the ToolLinkOS catalog as a gateway in front of one server "t" gives it
// (tools named t__TOOL, sorted by name) and its training runs with the names prefixed alike.
func toolLinkOS(t testing.TB) ([]byte, []learn.Trace) {
	t.Helper()
	base := "../../../../../shared/data/eval/toollinkos"
	raw, err := os.ReadFile(filepath.Join(base, "tools.json"))
	if err != nil {
		t.Skip("needs ../shared/data/eval/toollinkos")
	}
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	for _, tool := range cat.Tools {
		tool["name"] = "t__" + tool["name"].(string)
	}
	slices.SortFunc(cat.Tools, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	catalog, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := builder.ReadTraces(filepath.Join(base, "traces_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	traces := make([]learn.Trace, len(runs))
	for i, r := range runs {
		tools := make([]string, len(r.Skills))
		for k, s := range r.Skills {
			tools[k] = "t__" + s
		}
		traces[i] = learn.Trace{ID: "gw-replay-" + r.ID, Task: "run " + r.ID, Tools: tools, Failed: r.Failed}
	}
	return catalog, traces
}

func waitLoop(t testing.TB, l *learn.Loop) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(); st.LastError != "" {
		t.Fatal(st.LastError)
	}
}

// TestMatchesCaskgBuild checks that the graph the loop makes, by its first full build and by
// the incremental updates after it, is byte for byte the one caskg build makes from the state
// directory's catalog.json and traces.jsonl; also when the update has to fall back to a full
// build (a trace repeating a learned one, which Update would leave out), and after a catalog
// change.
func TestMatchesCaskgBuild(t *testing.T) {
	type batch struct {
		name    string
		catalog []byte // nil: unchanged
		traces  []learn.Trace
		mode    string // in the log line of the swap: "an update" or "a full build"
	}
	synthetic := func() []batch {
		tr := func(id string, failed bool, tools ...string) learn.Trace {
			return learn.Trace{ID: id, Task: "task " + id, Tools: tools, Failed: failed}
		}
		cat := func(names ...string) []byte {
			var b strings.Builder
			b.WriteString(`{"tools":[`)
			for i, n := range names {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":%q,"description":"%s does its part of the %s job with an order id.","inputSchema":{"type":"object","properties":{"order_id":{"type":"string","description":"The order id."}}}}`, n, n, strings.SplitN(n, "__", 2)[0])
			}
			b.WriteString("]}\n")
			return []byte(b.String())
		}
		names := []string{"a__login", "a__list_orders", "a__get_order", "a__cancel_order", "b__search", "b__book", "b__pay", "b__refund"}
		batchOf := func(from, to int) []learn.Trace {
			var out []learn.Trace
			for k := from; k < to; k++ {
				switch k % 4 {
				case 0:
					out = append(out, tr(fmt.Sprint("gw-s-", k), false, "a__login", "a__list_orders", "a__get_order"))
				case 1:
					out = append(out, tr(fmt.Sprint("gw-s-", k), false, "b__search", "b__book", "b__pay"))
				case 2:
					out = append(out, tr(fmt.Sprint("gw-s-", k), k%3 == 0, "a__login", "a__cancel_order"))
				case 3:
					out = append(out, tr(fmt.Sprint("gw-s-", k), false, "b__search", "b__book", "b__refund", "x__unknown"))
				}
			}
			return out
		}
		return []batch{
			{"first build, no traces", cat(names...), nil, "a full build"},
			{"8 traces", nil, batchOf(0, 8), "an update"},
			{"8 more", nil, batchOf(8, 16), "an update"},
			{"a repeat of a learned trace", nil, append(batchOf(16, 23), batchOf(0, 1)...), "a full build"},
			{"8 after the fallback", nil, batchOf(24, 32), "an update"},
			{"a tool added", cat(append(names, "b__invoice")...), nil, "a full build"},
			{"8 after the change", nil, batchOf(32, 40), "an update"},
		}
	}
	// Every batch of traces is LearnEvery long, so that it makes one update.
	tests := []struct {
		name       string
		learnEvery int
		rotate     int64 // learn.Options.RotateBytes
		batches    func(t *testing.T) []batch
	}{
		{"synthetic", 8, 0, func(*testing.T) []batch { return synthetic() }},
		{"synthetic, rotated every 1 KB", 8, 1000, func(*testing.T) []batch { return synthetic() }},
		{"toollinkos", 100, 0, func(t *testing.T) []batch {
			if testing.Short() {
				t.Skip("a few seconds of builds")
			}
			catalog, traces := toolLinkOS(t)
			return []batch{
				{"first build", catalog, nil, "a full build"},
				{"100 traces", nil, traces[:100], "an update"},
				{"100 more", nil, traces[100:200], "an update"},
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			batches := tc.batches(t)
			dir := filepath.Join(t.TempDir(), "state")
			lg := &fixture.Logs{}
			l, err := learn.Open(dir, learn.Options{LearnEvery: tc.learnEvery, RotateBytes: tc.rotate, Logf: lg.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
			recorded := 0
			for _, b := range batches {
				before := strings.Count(lg.String(), "graph swapped in")
				if b.catalog != nil {
					if err := l.SetCatalog(b.catalog); err != nil {
						t.Fatal(err)
					}
				}
				for _, tr := range b.traces {
					if err := l.Record(tr); err != nil {
						t.Fatal(err)
					}
				}
				recorded += len(b.traces)
				waitLoop(t, l)
				log := lg.String()
				if strings.Count(log, "graph swapped in") != before+1 || !strings.Contains(log[strings.LastIndex(log, "graph swapped in"):], "after "+b.mode+" ") {
					t.Fatalf("%s: want one swap after a %s:\n%s", b.name, b.mode, log)
				}
				if st := l.Status(); st.TracesLearned != recorded {
					t.Fatalf("%s: %d traces learned, want %d", b.name, st.TracesLearned, recorded)
				}
				got, err := os.ReadFile(filepath.Join(dir, learn.GraphFile))
				if err != nil {
					t.Fatal(err)
				}
				if want := caskgBuild(t, dir, recorded > 0); !bytes.Equal(got, want) {
					t.Fatalf("%s: graph.skg (%d bytes) differs from caskg build's (%d bytes)", b.name, len(got), len(want))
				}
			}
			if rotated, _ := filepath.Glob(filepath.Join(dir, "traces.[0-9]*.jsonl")); tc.rotate > 0 && len(rotated) < 2 {
				t.Errorf("%d rotated trace files, want several", len(rotated))
			}
		})
	}
}
