package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/clustered"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
)

// The same module must answer exactly as the native engine, in every host: same skills, same
// order, same float64 scores to the last bit, same evidence, same errors.

func TestParitySample(t *testing.T) {
	fx := need(t, sampleFixture, "")
	var reqs []engine.Request
	for _, task := range fx.tasks {
		reqs = append(reqs,
			engine.Request{Query: task.Query, K: 10},
			engine.Request{Query: task.Query, K: 10, NoGraph: true})
	}
	reqs = append(reqs,
		engine.Request{Query: "heat the egg", K: engine.MaxK, Seeds: engine.MaxSeeds, Gamma: 1},
		engine.Request{Query: "HEAT-object-in-micrwave, then cool_it", K: 3, Seeds: 1, Gamma: 0.05},
		engine.Request{Query: "zzqx unmatched wordz"},
		engine.Request{Query: " \t\n"},         // refused: empty
		engine.Request{Query: "egg", K: -1},    // refused: k out of range
		engine.Request{Query: "egg", Gamma: 2}, // refused: γ out of range
	)
	checkParity(t, fx, reqs)
}

// TestParityMemory: the memory of past tasks votes, and its evidence (Result.Recalled, the
// rendered recalled line) comes out of the module as out of the native engine, and not at all
// with NoMemory.
func TestParityMemory(t *testing.T) {
	data := testlib.SampleMemory(t)
	g := testlib.Decode(t, data)
	q := testlib.MemoryQuery
	reqs := []engine.Request{
		{Query: q},
		{Query: q, NoMemory: true},
		{Query: q, Render: true},
		{Query: q, Render: true, NoMemory: true},
		{Query: q, K: 3, NoGraph: true},
	}
	resp, err := engine.New(g).Query(reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(resp.Results, func(r engine.Result) bool { return r.Recalled != nil }) {
		t.Fatalf("%q: no result recalled; the test would prove nothing", q)
	}
	checkParity(t, fixture{artifact: data, graph: g}, reqs)
}

func TestParityToolLinkOS(t *testing.T) {
	fx := need(t, toolsFixture, toolsCatalog)
	if len(fx.tasks) != 200 {
		t.Fatalf("%d ToolLinkOS tasks, want 200", len(fx.tasks))
	}
	reqs := make([]engine.Request, len(fx.tasks))
	for i, task := range fx.tasks {
		reqs[i] = engine.Request{Query: task.Query, K: 10}
	}
	checkParity(t, fx, reqs)
}

// answer is a response or an error, as every host reports it.
type answer struct {
	Results    []engine.Result `json:"results"`
	Iterations int             `json:"iterations"`
	Error      string          `json:"error"`
}

func errorAnswer(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return b
}

func checkParity(t *testing.T, fx fixture, reqs []engine.Request) {
	t.Helper()
	ctx := context.Background()
	native := engine.New(fx.graph)
	want := make([][]byte, len(reqs))
	lines := make([][]byte, len(reqs))
	for i, r := range reqs {
		resp, err := native.Query(r)
		if err != nil {
			want[i] = errorAnswer(err.Error())
		} else {
			want[i], _ = json.Marshal(resp) // what `caskg query --json` prints
		}
		lines[i], _ = json.Marshal(r)
	}

	t.Run("wazero", func(t *testing.T) {
		p := load(t, host.Options{}, fx.artifact)
		bad := 0
		for i := range reqs {
			got, err := p.QueryJSON(ctx, lines[i])
			var me *host.Error
			switch {
			case errors.As(err, &me):
				got = errorAnswer(me.Msg)
			case err != nil:
				t.Fatalf("request %s: %v", lines[i], err)
			}
			if !bytes.Equal(got, want[i]) {
				bad++
				if bad <= 3 {
					t.Errorf("request %s:\nwazero %s\nnative %s", lines[i], got, want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d answers differ from the native engine's", bad, len(reqs))
		}
	})

	t.Run("node", func(t *testing.T) {
		node := nodeOrSkip(t)
		dir := t.TempDir()
		out := runMJS(t, node, dir, fx.artifact, append(bytes.Join(lines, []byte("\n")), '\n'))
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(got) != len(reqs) {
			t.Fatalf("node answered %d requests of %d", len(got), len(reqs))
		}
		bad := 0
		for i := range reqs {
			// JavaScript writes numbers in its own notation; compare the values, which must be
			// the same float64s.
			var g, w answer
			if err := json.Unmarshal([]byte(got[i]), &g); err != nil {
				t.Fatalf("node answer %d: %v: %s", i, err, got[i])
			}
			if err := json.Unmarshal(want[i], &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				bad++
				if bad <= 3 {
					t.Errorf("request %s (-native +node):\n%s", lines[i], diff)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d answers differ from the native engine's", bad, len(reqs))
		}
	})
}

// nodeOrSkip returns the node binary, or skips the test when Node 20 or newer is not on PATH.
func nodeOrSkip(tb testing.TB) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Skip("node is not on PATH: the Node side of this test needs Node.js 20 or newer")
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		tb.Skipf("node --version: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 20 {
		tb.Skipf("node %s is too old: the Node side of this test needs Node.js 20 or newer", v)
	}
	return node
}

// TestJSModule runs wasm/js/test.mjs: caskg.js's sources, info, errors and memory growth.
func TestJSModule(t *testing.T) {
	node := nodeOrSkip(t)
	fx := need(t, sampleFixture, "")
	art := filepath.Join(t.TempDir(), "sample.skg")
	if err := os.WriteFile(art, fx.artifact, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "../js/test.mjs", wasmPath, art, strconv.Itoa(fx.graph.NumSkills())).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("node test.mjs: %v\n%s", err, out)
	}
}

// TestRunMJSBadLines checks that wasm/js/run.mjs answers every line it is given: a line that
// is not JSON, not an object, or a request with k 0 gets its own error and the lines around it
// their answers.
func TestRunMJSBadLines(t *testing.T) {
	node := nodeOrSkip(t)
	fx := need(t, sampleFixture, "")
	lines := []string{`{"query":"heat some egg","k":2}`, `{"query": "egg"`, `[1]`, `{"query":"heat some egg","k":0}`, `{"query":"put a cool tomato in the microwave","k":1}`}
	out := runMJS(t, node, t.TempDir(), fx.artifact, []byte(strings.Join(lines, "\n")+"\n"))
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{`{"results":[{"name":"heat-object-in-microwave"`, `{"error":"line 2: not JSON: `, `{"error":"line 3: not a request object"}`,
		`{"error":"engine: field \"k\": 0 is outside [1, 1000]"}`, `{"results":[{"name":"cool-object-in-fridge"`}
	if len(got) != len(want) {
		t.Fatalf("%d answers to %d lines:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d: answer %s, want it to start %s", i+1, got[i], w)
		}
	}
}

// runMJS runs wasm/js/run.mjs on the module, the artifact and the request lines, written into
// dir, and returns its output.
func runMJS(t *testing.T, node, dir string, artifact, requests []byte) []byte {
	t.Helper()
	art := filepath.Join(dir, "artifact.skg")
	in := filepath.Join(dir, "requests.jsonl")
	if err := os.WriteFile(art, artifact, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, requests, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(node, "../js/run.mjs", wasmPath, art, in)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.mjs: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// TestParityClusters: a large library's semantic seeds through the artifact's vector clusters
// (format 2.2) rank alike natively, where the pool goes through the integer kernel
// (nearestAmong), and in the module, where every pool skill gets its exact cosine.
func TestParityClusters(t *testing.T) {
	const dim, k = 16, 40
	n := engine.LargeLibrary
	rng := rand.New(rand.NewPCG(36, 4))
	vecs, cent, clusters := clustered.Vectors(rng, n, k, dim, 0.4)
	words := []string{"parse", "render", "fetch", "index", "merge", "split", "plot", "score"}
	art := &graphs.Artifact{Clusters: clusters}
	for i := range n {
		art.Skills = append(art.Skills, graphs.Skill{Name: "skill-" + strconv.Itoa(i), Description: words[i%8] + " " + words[(i/8)%8] + " data"})
	}
	var err error
	if art.Vectors, err = graphs.NewVectors("test", vecs); err != nil {
		t.Fatal(err)
	}
	data := testlib.Encode(art)
	g := testlib.Decode(t, data)
	var reqs []engine.Request
	for i := range 12 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = cent[i%k][j] + float32(rng.NormFloat64())
		}
		reqs = append(reqs, engine.Request{Query: words[i%8] + " data", Vector: v, K: 10},
			engine.Request{Query: words[i%8] + " data", Vector: v, K: 10, NoGraph: true})
	}
	checkParity(t, fixture{artifact: data, graph: g}, reqs)
}
