package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/modbuild"
)

// The end-to-end test serves the playground with native/serve on 127.0.0.1, opens it in headless
// Chromium and uses it as a person would: it waits for the first answer, runs the 40 sample
// tasks from the task menu and by typing, turns the graph off and on, and loads a second
// artifact through the file input. Every list the page shows must equal the native engine's
// answer for the same request. Screenshots go to ../artifacts/playground/.

// chromiumPath finds the browser: CASKG_CHROMIUM (make test sets it; the test fails if it names
// no program), else chromium on the PATH; without either the test is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CASKG_CHROMIUM"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Fatalf("CASKG_CHROMIUM=%s: not an executable browser (%v); run make chromium", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium (make chromium installs it, make test sets CASKG_CHROMIUM); skipping the browser end-to-end test")
	return ""
}

// buildModule builds the WASI reactor as make wasm does.
func buildModule(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "caskg.wasm")
	if err := modbuild.Build(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// buildArtifact writes the artifact of a library folder, built as caskg build does by default,
// to out and returns an engine over it.
func buildArtifact(t *testing.T, lib, out string) *engine.Engine {
	t.Helper()
	data := testlib.Build(t, lib)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	g := testlib.Decode(t, data)
	return engine.New(g)
}

// hostile is the description of a skill in the second artifact: text that would run script if
// the page ever handed it to the HTML parser.
const hostile = `Read a gauge dial <img src=x onerror=alert(1)> and report its value.`

// writeSecondLibrary writes a small library whose skills chain: locate the gauge, read it (the
// hostile description), log the reading.
func writeSecondLibrary(t *testing.T, dir string) {
	t.Helper()
	skills := []struct{ name, desc, extra, body string }{
		{"locate-pressure-gauge", "Find the pressure gauge on the boiler panel before taking a reading.", "outputs: [gauge location]", "Walk the panel from left to right."},
		{"read-gauge-dial", hostile, "inputs: [gauge location]\noutputs: [gauge reading]\ndepends_on: [locate-pressure-gauge]", "Look straight at the needle. <script>alert(2)</script>"},
		{"log-gauge-reading", "Write the gauge reading into the boiler log with the time.", "inputs: [gauge reading]\ndepends_on: [read-gauge-dial]", "Use the log book by the door."},
		{"vent-boiler-steam", "Open the relief valve to vent steam when the pressure is too high.", "inputs: [gauge reading]", "Turn the red handle a quarter turn."},
	}
	for _, s := range skills {
		d := filepath.Join(dir, s.name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		md := fmt.Sprintf("---\nname: %s\ndescription: %q\n%s\n---\n\n## Steps\n%s\n", s.name, s.desc, s.extra, s.body)
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// shownResult is one entry of a list on the page, read from its data attributes.
type shownResult struct {
	Name     string `json:"name"`
	Score    string `json:"score"`
	SeedRank string `json:"seedRank"`
	Evidence string `json:"evidence"` // the label: seed #N, via graph or match
	Recalled string `json:"recalled"` // the memory's evidence line, "" when it did not raise the result
	Via      []struct {
		From, State, Weight, Type, Reverse string
	} `json:"via"`
}

// readList is the script that reads a results list (#results or #plain) from the page.
func readList(id string) string {
	return `[...document.querySelectorAll("#` + id + ` > li")].map((li) => ({
		name: li.dataset.name, score: li.dataset.score, seedRank: li.dataset.seedRank, evidence: li.dataset.evidence,
		recalled: li.dataset.recalled,
		via: [...li.querySelectorAll("li.edge-line")].map((v) => ({From: v.dataset.from, State: v.dataset.state,
			Weight: v.dataset.weight, Type: v.dataset.type, Reverse: v.dataset.reverse})),
	}))`
}

// sameResults reports how the page's list differs from the engine's results, "" if not at all.
// Scores and weights must be the same float64: the page shows the shortest text that reads back
// as the number, so parsing it gives the module's value exactly.
func sameResults(shown []shownResult, want []engine.Result) string {
	if len(shown) != len(want) {
		return fmt.Sprintf("page shows %d results, native has %d", len(shown), len(want))
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	for i, w := range want {
		s := shown[i]
		if s.Name != w.Name || num(s.Score) != w.Score || s.SeedRank != strconv.Itoa(w.SeedRank) || len(s.Via) != len(w.Via) {
			return fmt.Sprintf("result %d: page %s score %s seed %s (%d edges), native %s score %v seed %d (%d edges)",
				i+1, s.Name, s.Score, s.SeedRank, len(s.Via), w.Name, w.Score, w.SeedRank, len(w.Via))
		}
		if s.Evidence != engine.Why(w) {
			return fmt.Sprintf("result %d (%s): page says %q, native %q", i+1, w.Name, s.Evidence, engine.Why(w))
		}
		var recalled string
		if w.Recalled != nil {
			recalled = w.Recalled.Evidence()
		}
		if s.Recalled != recalled {
			return fmt.Sprintf("result %d (%s): page recalls %q, native %q", i+1, w.Name, s.Recalled, recalled)
		}
		for j, v := range w.Via {
			sv := s.Via[j]
			if sv.From != v.From || sv.State != v.State || float32(num(sv.Weight)) != v.Weight || sv.Type != v.Type || sv.Reverse != strconv.FormatBool(v.Reverse) {
				return fmt.Sprintf("result %d (%s), edge %d: page %+v, native %+v", i+1, w.Name, j+1, sv, v)
			}
		}
	}
	return ""
}

// page drives one tab of the playground.
type pageT struct {
	t   *testing.T
	ctx context.Context
	run int // the page's run counter last seen
}

func (p *pageT) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func evalJS[T any](p *pageT, what, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitAnswer waits until the page has answered query with the graph on or off after the last
// answer seen, and returns both lists.
func (p *pageT) waitAnswer(query string, graph bool) (main, plain []shownResult) {
	p.t.Helper()
	state := "off"
	if graph {
		state = "on"
	}
	q, _ := json.Marshal(query)
	expr := fmt.Sprintf(`(() => { const r = document.getElementById("results").dataset;
		return r.query === %s && r.outcome === "ok" && r.graph === %q && Number(r.run) > %d ? Number(r.run) : 0; })()`, q, state, p.run)
	run, err := chromedp.Run(p.ctx, chromedp.Poll[int](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(10*time.Millisecond)))
	if err != nil {
		errText := evalJS[string](p, "reading the error", `document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`)
		p.t.Fatalf("no answer for %q (graph %s): %v; page error: %q", query, state, err, errText)
	}
	p.run = run
	return evalJS[[]shownResult](p, "reading the list", readList("results")), evalJS[[]shownResult](p, "reading the plain list", readList("plain"))
}

// clearQuery empties the query box without an input event, as selecting its text would before
// typing over it.
func (p *pageT) clearQuery() {
	p.t.Helper()
	evalJS[bool](p, "clearing the query", `(document.getElementById("q").value = "", true)`)
}

func (p *pageT) screenshot(name string) {
	p.t.Helper()
	p.save(name, chromedp.FullScreenshot(100))
}

// screenshotOf saves a picture of the element sel only.
func (p *pageT) screenshotOf(sel, name string) {
	p.t.Helper()
	p.save(name, chromedp.Screenshot(sel))
}

func (p *pageT) save(name string, shot chromedp.Action[[]byte]) {
	p.t.Helper()
	b, err := chromedp.Run(p.ctx, shot)
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "artifacts", "playground")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
}

// openBrowser starts headless Chromium with a fresh profile under dir and returns a tab whose
// context ends after limit or with the test.
func openBrowser(t *testing.T, browser, dir string, limit time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.WindowSize(1400, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	// Start the browser without a deadline (a deadline on the first call bounds the browser's
	// life), then bound the whole session.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}
	ctx, cancel := context.WithTimeout(tab, limit)
	t.Cleanup(cancel)
	return ctx
}

func TestPlaygroundEndToEnd(t *testing.T) {
	browser := chromiumPath(t)
	dir := t.TempDir()
	wasm := buildModule(t, dir)
	sampleSkg := filepath.Join(dir, "sample.skg")
	sample := buildArtifact(t, "../graphs/sample", sampleSkg)
	lib2 := filepath.Join(dir, "gauges")
	writeSecondLibrary(t, lib2)
	secondSkg := filepath.Join(dir, "gauges.skg")
	second := buildArtifact(t, lib2, secondSkg)
	tasks, err := testlib.ReadTasks("../graphs/sample-tasks.jsonl", true)
	if err != nil {
		t.Fatal(err)
	}

	srv, err := serve.New(serve.Options{Artifact: sampleSkg, Playground: ".", JS: "../wasm/js", WASM: wasm,
		Tasks: "../graphs/sample-tasks.jsonl", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv) // 127.0.0.1, a free port
	defer ts.Close()

	ctx := openBrowser(t, browser, dir, 4*time.Minute)
	p := &pageT{t: t, ctx: ctx}

	// Bytes on the wire, from the DevTools network events; and any dialog the page opens.
	var mu sync.Mutex
	wire := map[network.RequestID]float64{}
	var dialogs []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventLoadingFinished:
			wire[ev.RequestID] = ev.EncodedDataLength
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, ev.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}

	// 1. Open the page: the served sample graph with the first sample task answered.
	start := time.Now()
	p.do("opening the page", chromedp.Navigate(ts.URL+"/"))
	first := tasks[0]
	main, plain := p.waitAnswer(first.Query, true)
	wall := time.Since(start)
	firstMs, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body.dataset.firstResultMs`, chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatalf("the page did not record its first result: %v", err)
	}
	timeline := evalJS[string](p, "reading the timeline", `[...performance.getEntriesByType("resource").map((e) => e.name.split("/").pop() + " " + e.startTime.toFixed(0) + "–" + e.responseEnd.toFixed(0)),
		...performance.getEntriesByType("mark").map((e) => e.name + " " + e.startTime.toFixed(0)),
		"DOMContentLoaded " + performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd.toFixed(0)].join(", ")`)
	t.Logf("timeline (ms after navigation): %s", timeline)
	perfBytes := evalJS[float64](p, "reading transfer sizes", `performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource")).reduce((s, e) => s + e.transferSize, 0)`)
	mu.Lock()
	var cdpBytes float64
	for _, n := range wire {
		cdpBytes += n
	}
	requests := len(wire)
	mu.Unlock()
	t.Logf("navigation to first result: %s ms by the page's clock (performance.now at the first painted answer), %d ms by the test's", firstMs, wall.Milliseconds())
	t.Logf("bytes transferred to the first result: %.0f in %d requests (DevTools network events), %.0f (Performance API transferSize)", cdpBytes, requests, perfBytes)
	if requests < 6 || cdpBytes < 100_000 {
		t.Errorf("the page loaded %d requests of %.0f bytes; want at least the page, its scripts, the module and the artifact", requests, cdpBytes)
	}
	p.screenshot("1-sample-first-task.png")
	if got := evalJS[string](p, "reading the stats", `document.getElementById("stats").dataset.skills`); got != strconv.Itoa(sample.Graph().NumSkills()) {
		t.Errorf("stats show %s skills, the artifact has %d", got, sample.Graph().NumSkills())
	}
	check := func(eng *engine.Engine, query string, graph bool, main, plain []shownResult) {
		t.Helper()
		want, err := eng.Query(engine.Request{Query: query, K: 8, Seeds: 5, Gamma: 0.2, NoGraph: !graph})
		if err != nil {
			t.Fatal(err)
		}
		if d := sameResults(main, want.Results); d != "" {
			t.Errorf("%q (graph %v), main list: %s", query, graph, d)
		}
		wantPlain, err := eng.Query(engine.Request{Query: query, K: 8, Seeds: 5, Gamma: 0.2, NoGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := sameResults(plain, wantPlain.Results); d != "" {
			t.Errorf("%q, without-graph list: %s", query, d)
		}
	}
	check(sample, first.Query, true, main, plain)

	// 2. Every sample task from the task menu; the graph view must draw the bundle.
	for _, task := range tasks[1:] {
		q, _ := json.Marshal(task.Query)
		evalJS[bool](p, "choosing a task", `(() => { const s = document.getElementById("tasks"); s.value = `+string(q)+`; s.dispatchEvent(new Event("change")); return true; })()`)
		main, plain := p.waitAnswer(task.Query, true)
		check(sample, task.Query, true, main, plain)
	}
	if n := evalJS[int](p, "counting graph nodes", `document.querySelectorAll("#graph .gnode").length`); n < 8 {
		t.Errorf("the graph view shows %d skills, want the 8 of the bundle and its neighbours", n)
	}
	if n := evalJS[int](p, "counting graph edges", `document.querySelectorAll("#graph .gedge").length`); n == 0 {
		t.Error("the graph view shows no edges")
	}

	// 3. Typing: the answer follows the text once typing pauses (debounced).
	typed := tasks[4].Query
	p.clearQuery()
	p.do("typing a task", chromedp.SendKeys("#q", typed))
	main, plain = p.waitAnswer(typed, true)
	check(sample, typed, true, main, plain)
	p.do("clicking a node", chromedp.Click("#graph .gnode.via"))
	if got := evalJS[string](p, "reading the skill panel", `document.querySelector("#skill h3")?.textContent ?? ""`); got == "" {
		t.Error("clicking a skill in the graph shows no skill")
	}
	p.screenshot("2-typed-task.png")
	p.screenshotOf("#graph", "2-typed-task-graph.png")

	// 4. The graph off and on again.
	p.do("turning the graph off", chromedp.Click("#use-graph"))
	main, plain = p.waitAnswer(typed, false)
	check(sample, typed, false, main, plain)
	p.screenshot("3-graph-off.png")
	p.do("turning the graph on", chromedp.Click("#use-graph"))
	main, plain = p.waitAnswer(typed, true)
	check(sample, typed, true, main, plain)

	// 5. Another artifact by URL and by drag and drop: the served sample again, under new names.
	p.do("loading by URL", chromedp.SendKeys("#url", ts.URL+"/artifact.skg"), chromedp.Click(`#url-form button[type="submit"]`))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#stats b")?.textContent === "artifact.skg"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("loading by URL: %v", err)
	}
	main, plain = p.waitAnswer(typed, true)
	check(sample, typed, true, main, plain)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(async () => {
		const bytes = await (await fetch("artifact.skg")).arrayBuffer();
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], "dropped.skg"));
		document.body.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("dropping a file: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#stats b")?.textContent === "dropped.skg"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the dropped file did not load: %v", err)
	}
	main, plain = p.waitAnswer(typed, true)
	check(sample, typed, true, main, plain)

	// 6. A second artifact through the file input; its hostile description must show as text.
	p.do("choosing a file", chromedp.SetUploadFiles("#file", []string{secondSkg}))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("stats").dataset.skills === "%d"`, second.Graph().NumSkills()),
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the second artifact did not load: %v", err)
	}
	gaugeQuery := "read the boiler gauge and log the reading"
	p.clearQuery()
	p.do("typing a gauge task", chromedp.SendKeys("#q", gaugeQuery))
	main, plain = p.waitAnswer(gaugeQuery, true)
	check(second, gaugeQuery, true, main, plain)
	if !slices.ContainsFunc(main, func(r shownResult) bool { return r.Name == "read-gauge-dial" }) {
		t.Fatalf("the gauge task does not bring up read-gauge-dial: %+v", main)
	}
	p.do("opening the hostile skill", chromedp.Click(`#results li[data-name="read-gauge-dial"] button.name`))
	p.screenshot("4-second-artifact.png")
	texts := evalJS[[]string](p, "reading the description", `[document.querySelector('#results li[data-name="read-gauge-dial"] .desc')?.textContent ?? "",
		document.querySelector("#skill .desc")?.textContent ?? "", document.querySelector("#skill .body")?.textContent ?? ""]`)
	if texts[0] != hostile || texts[1] != hostile {
		t.Errorf("the description shows as %q in the list and %q in the skill panel, want the text %q", texts[0], texts[1], hostile)
	}
	if !strings.Contains(texts[2], "<script>alert(2)</script>") {
		t.Errorf("the skill body shows as %q, want its <script> as text", texts[2])
	}
	if n := evalJS[int](p, "counting elements the text could make", `document.querySelectorAll("img, script:not([src])").length`); n != 0 {
		t.Errorf("skill text became %d img or inline script elements", n)
	}
	if !strings.Contains(evalJS[string](p, "reading the bundle", `document.getElementById("bundle").textContent`), hostile) {
		t.Error("the rendered bundle lacks the description as text")
	}
	// 7. An artifact with a memory of past tasks: a result the memory raised shows its recalled
	// line, as the engine words it.
	memSkg := filepath.Join(dir, "memory.skg")
	if err := os.WriteFile(memSkg, testlib.SampleMemory(t), 0o644); err != nil {
		t.Fatal(err)
	}
	memGraph := testlib.Decode(t, testlib.SampleMemory(t))
	p.do("choosing the memory artifact", chromedp.SetUploadFiles("#file", []string{memSkg}))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("stats").dataset.skills === "%d"`, memGraph.NumSkills()),
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the memory artifact did not load: %v", err)
	}
	p.clearQuery()
	p.do("typing a task the memory knows", chromedp.SendKeys("#q", testlib.MemoryQuery))
	main, plain = p.waitAnswer(testlib.MemoryQuery, true)
	check(engine.New(memGraph), testlib.MemoryQuery, true, main, plain)
	if !slices.ContainsFunc(main, func(r shownResult) bool { return strings.HasPrefix(r.Recalled, "recalled: ") }) {
		t.Errorf("no result shows the memory's recalled line: %+v", main)
	}
	p.screenshot("5-memory-artifact.png")

	mu.Lock()
	if len(dialogs) > 0 {
		t.Errorf("the page opened dialogs: %q", dialogs)
	}
	mu.Unlock()
	if msg := evalJS[string](p, "reading the error", `document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`); msg != "" {
		t.Errorf("the page shows an error: %s", msg)
	}

	// 7. A task in another script than the library's: the page says no term of it is known,
	// rather than showing an empty list without a word; the gauge task above had no such note.
	if note := evalJS[string](p, "reading the query note", queryNoteJS); note != "" {
		t.Errorf("the gauge task shows the note %q, want none", note)
	}
	korean := "서울 날씨 알려줘"
	p.clearQuery()
	p.do("typing a Korean task", chromedp.SendKeys("#q", korean))
	p.waitAnswer(korean, true)
	if note := evalJS[string](p, "reading the query note", queryNoteJS); !strings.Contains(note, "no term of the query is in this library's index: 서울") {
		t.Errorf("the Korean task shows the note %q, want that no term of it is known", note)
	}
}

// queryNoteJS reads the note the page shows on its answer, "" when hidden.
const queryNoteJS = `(() => { const n = document.getElementById("query-note"); return n.hidden ? "" : n.textContent; })()`

// realSkills is the 859-skill library of real SKILL.md files beside the repository.
const realSkills = "../../shared/data/skills"

// graphCheck is what the page reports about its graph view (see graphProbe).
type graphCheck struct {
	Nodes, Columns, Directed int
	Paths, Undirected        []string // each edge's d; each undirected edge as "type a|b", a < b
	Outside                  []string // labels not inside the SVG or not inside their box
	BadTitles                []string // nodes whose <title> does not start with the full name
}

// graphProbe reads the graph view: distinct node columns (by x), the edges, and every label's
// box against the SVG's and its node's.
const graphProbe = `(() => {
	const svg = document.querySelector("#graph svg");
	if (!svg) return {Nodes: 0, Columns: 0, Directed: 0, Paths: [], Undirected: [], Outside: [], BadTitles: []};
	const nodes = [...svg.querySelectorAll(".gnode")];
	const linked = new Set();
	const edges = [...svg.querySelectorAll(".gedge")];
	for (const e of edges) (linked.add(e.dataset.from), linked.add(e.dataset.to));
	const xs = new Set(nodes.filter((g) => linked.has(g.dataset.name)).map((g) => g.transform.baseVal.consolidate().matrix.e));
	const s = svg.getBoundingClientRect();
	const vb = svg.viewBox.baseVal;
	const inside = (r, o, eps) => r.left >= o.left - eps && r.right <= o.right + eps && r.top >= o.top - eps && r.bottom <= o.bottom + eps;
	const outside = [];
	for (const t of svg.querySelectorAll("text")) {
		const r = t.getBoundingClientRect();
		const box = t.closest(".gnode")?.querySelector("rect")?.getBoundingClientRect();
		if (!inside(r, s, 0.5) || (box && !inside(r, box, 0.5))) outside.push(t.textContent);
	}
	for (const g of nodes) {
		const r = g.getBoundingClientRect();
		if (!inside(r, s, 0.5)) outside.push("node " + g.dataset.name);
	}
	return {
		Nodes: nodes.length, Columns: xs.size,
		Directed: edges.filter((e) => e.dataset.directed === "true").length,
		Paths: edges.map((e) => e.getAttribute("d")),
		Undirected: edges.filter((e) => e.dataset.directed === "false").map((e) => e.dataset.type + " " + [e.dataset.from, e.dataset.to].sort().join("|")),
		Outside: outside,
		BadTitles: nodes.filter((g) => !g.querySelector("title")?.textContent.startsWith(g.dataset.name + " (")).map((g) => g.dataset.name),
		ViewBox: [vb.width, vb.height],
	};
})()`

// TestPlaygroundRealLibrary opens the page on the artifact of the 859 real skills, given as
// ?artifact=, asks a SkillsBench task whose answer holds workflow and similarity edges, and
// checks that the graph view reads: several columns, no two edges on one path, each similarity
// pair drawn once, every label inside the drawing and its box. Then the knobs: an out-of-range k
// is refused with its range, k = 1 says "1 skill"; and a phone's 375 px: no sideways scroll.
func TestPlaygroundRealLibrary(t *testing.T) {
	if _, err := os.Stat(realSkills); err != nil {
		t.Skipf("no real skill library at %s: %v", realSkills, err)
	}
	browser := chromiumPath(t)
	dir := t.TempDir()
	wasm := buildModule(t, dir)
	skg := filepath.Join(dir, "skills.skg")
	eng := buildArtifact(t, realSkills, skg)
	tasks, err := testlib.ReadTasks("../../shared/data/eval/skillsbench/tasks.jsonl", false)
	if err != nil {
		t.Skipf("no SkillsBench tasks: %v", err)
	}
	i := slices.IndexFunc(tasks, func(task testlib.Task) bool { return task.ID == "multilingual-video-dubbing" })
	if i < 0 {
		t.Skip("the SkillsBench tasks lack multilingual-video-dubbing")
	}
	// One line, as a text input holds it (it drops line breaks).
	query := strings.Join(strings.Fields(tasks[i].Query), " ")
	// The page draws the answer and the next 4 (k = 8, its default); the test needs ordered and
	// similarity edges among them, or it would check nothing.
	wide, err := eng.Query(engine.Request{Query: query, K: 12, Seeds: 5, Gamma: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var ordered, similar int
	for _, r := range wide.Results {
		for _, v := range r.Via {
			switch v.Type {
			case "dependency", "workflow":
				ordered++
			case "semantic":
				similar++
			}
		}
	}
	if ordered == 0 || similar == 0 {
		t.Fatalf("the answer to %s has %d ordered and %d similarity edges; the test needs both", tasks[i].ID, ordered, similar)
	}

	// No tasks are served: the page, given an artifact, must not ask for them.
	srv, err := serve.New(serve.Options{Artifact: skg, Playground: ".", JS: "../wasm/js", WASM: wasm, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	ctx := openBrowser(t, browser, dir, 3*time.Minute)
	p := &pageT{t: t, ctx: ctx}
	var mu sync.Mutex
	var asked []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			asked = append(asked, ev.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	p.do("opening the page", chromedp.Navigate(ts.URL+"/?artifact=artifact.skg"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("stats").dataset.skills === "%d"`, eng.Graph().NumSkills()),
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the real library did not load: %v", err)
	}
	setQuery := func(q string) {
		t.Helper()
		b, _ := json.Marshal(q)
		evalJS[bool](p, "asking", `(() => { const q = document.getElementById("q"); q.value = `+string(b)+`; q.dispatchEvent(new Event("input")); return true; })()`)
	}
	setQuery(query)
	main, _ := p.waitAnswer(query, true)
	want, err := eng.Query(engine.Request{Query: query, K: 8, Seeds: 5, Gamma: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameResults(main, want.Results); d != "" {
		t.Errorf("main list: %s", d)
	}
	p.screenshot("5-real-library.png")
	p.screenshotOf("#graph", "5-real-library-graph.png")

	// The library is built from text alone: the page says the graph has learned nothing yet.
	if note := evalJS[string](p, "reading the learning note", `(() => { const l = document.getElementById("learning"); return l.hidden ? "" : l.textContent; })()`); !strings.Contains(note, "learned nothing from use yet") || !strings.Contains(note, "caskg gateway") {
		t.Errorf("learning note %q, want the cold start and how the graph learns", note)
	}
	// A desktop's graph view has the room for whole names: none is cut, and nothing scrolls.
	checkGraphWidth(p, "at 1400 px", false)

	g := evalJS[graphCheck](p, "reading the graph", graphProbe)
	t.Logf("graph view: %d skills in %d columns, %d edges (%d ordered)", g.Nodes, g.Columns, len(g.Paths), g.Directed)
	if g.Nodes < 12 || g.Nodes > 8+4+6 {
		t.Errorf("the graph view draws %d skills, want the 8 of the answer, the next 4 and at most 6 sources", g.Nodes)
	}
	if g.Directed == 0 || g.Columns < 2 {
		t.Errorf("the answer has %d ordered edges, the view draws %d in %d column(s); want them spread over columns", ordered, g.Directed, g.Columns)
	}
	seen := map[string]bool{}
	for _, d := range g.Paths {
		if seen[d] {
			t.Errorf("two edges share the path %s", d)
		}
		seen[d] = true
	}
	pairs := map[string]int{}
	for _, u := range g.Undirected {
		pairs[u]++
	}
	if len(pairs) == 0 {
		t.Error("the view draws no similarity edge")
	}
	for pair, n := range pairs {
		if n != 1 {
			t.Errorf("the undirected edge %s is drawn %d times", pair, n)
		}
	}
	if len(g.Outside) > 0 {
		t.Errorf("labels outside the drawing or their box: %q", g.Outside)
	}
	if len(g.BadTitles) > 0 {
		t.Errorf("nodes whose tooltip lacks the full name: %q", g.BadTitles)
	}
	mu.Lock()
	for _, u := range asked {
		if strings.HasSuffix(strings.SplitN(u, "?", 2)[0], "/tasks.json") {
			t.Errorf("the page asked for %s though given an artifact", u)
		}
	}
	mu.Unlock()

	// An out-of-range k is refused with its range, and no stale answer stays.
	setK := func(v string) {
		t.Helper()
		evalJS[bool](p, "setting k", `(() => { const k = document.getElementById("k"); k.value = "`+v+`"; k.dispatchEvent(new Event("input")); return true; })()`)
	}
	setK("80")
	msg, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const e = document.getElementById("error"); return !e.hidden && e.textContent; })()`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatalf("k = 80 shows no error: %v", err)
	}
	if !strings.Contains(msg, "from 1 to 50") || !strings.Contains(msg, "80") {
		t.Errorf("k = 80 shows %q, want the allowed range 1 to 50 and the value", msg)
	}
	if n := evalJS[int](p, "counting results", `document.querySelectorAll("#results > li, #plain > li, #graph .gnode").length`); n != 0 {
		t.Errorf("with k out of range the page still shows %d results and nodes", n)
	}
	setK("1")
	main, _ = p.waitAnswer(query, true)
	if len(main) != 1 {
		t.Errorf("k = 1 shows %d results", len(main))
	}
	if status := evalJS[string](p, "reading the status", `document.getElementById("status").textContent`); !strings.HasPrefix(status, "1 skill, match ") {
		t.Errorf("k = 1: status %q, want \"1 skill, match …\"", status)
	}
	if msg := evalJS[string](p, "reading the error", `document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`); msg != "" {
		t.Errorf("the error stays after k is fixed: %q", msg)
	}
	setK("8")
	p.waitAnswer(query, true)

	// A phone: nothing wider than the screen, the list in view.
	p.do("emulating a phone", chromedp.EmulateViewport(375, 812))
	setQuery(query + " ")
	p.waitAnswer(query, true) // the page trims the text: the same answer, run again at 375 px
	if w := evalJS[int](p, "measuring the page", `document.documentElement.scrollWidth`); w > 375 {
		wide := evalJS[[]string](p, "finding wide elements", `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 376 && !e.closest("#graph")).slice(0, 8).map((e) => e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`)
		t.Errorf("at 375 px the page is %d px wide (scrolls sideways); widest: %q", w, wide)
	}
	if ok := evalJS[bool](p, "looking at the list", `(() => { const li = document.querySelector("#results > li"); if (!li) return false;
		const r = li.getBoundingClientRect(); return r.width > 100 && r.left >= 0 && r.right <= 375 && getComputedStyle(li).visibility === "visible"; })()`); !ok {
		t.Error("at 375 px the result list is not visible within the screen")
	}
	checkGraphWidth(p, "at 375 px", true)
	p.screenshot("6-phone.png")
	p.screenshotOf("#graph-view", "6-phone-graph.png")
}

// graphWidth is how the graph view sits in its box.
type graphWidth struct {
	Box, Drawing int      // the box's inner width, the drawing's width on screen
	Scrolls      bool     // the box scrolls sideways
	Hint         bool     // the page says it scrolls
	HintRight    int      // the hint's right edge
	Cut          []string // names shown cut in their node
}

const graphWidthProbe = `(() => {
	const box = document.getElementById("graph"), hint = document.getElementById("graph-scroll");
	const svg = box.querySelector("svg");
	return {Box: box.clientWidth, Drawing: svg ? Math.round(svg.getBoundingClientRect().width) : 0,
		Scrolls: box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX === "auto",
		Hint: !hint.hidden && hint.getBoundingClientRect().height > 0, HintRight: Math.round(hint.getBoundingClientRect().right),
		Cut: [...box.querySelectorAll(".gnode")].filter((g) => g.querySelector(".gname").textContent !== g.dataset.name).map((g) => g.dataset.name)};
})()`

// checkGraphWidth holds the graph view to its box: the drawing fits, or the box scrolls and
// the page says so; where it fits, no name is cut. narrow says the drawing cannot fit (a phone):
// then it must scroll with the hint in view.
func checkGraphWidth(p *pageT, where string, narrow bool) {
	p.t.Helper()
	g := evalJS[graphWidth](p, "measuring the graph view", graphWidthProbe)
	p.t.Logf("%s: graph box %d px, drawing %d px, scrolls %v, hint %v, cut %q", where, g.Box, g.Drawing, g.Scrolls, g.Hint, g.Cut)
	switch {
	case g.Drawing == 0:
		p.t.Errorf("%s: no graph drawn", where)
	case g.Drawing <= g.Box+1 && (g.Scrolls || g.Hint):
		p.t.Errorf("%s: the drawing (%d px) fits its box (%d px), but the box scrolls (%v) or the page says so (%v)", where, g.Drawing, g.Box, g.Scrolls, g.Hint)
	case g.Drawing > g.Box+1 && !(g.Scrolls && g.Hint):
		p.t.Errorf("%s: the drawing (%d px) is wider than its box (%d px); want the box to scroll (%v) and the page to say so (%v)", where, g.Drawing, g.Box, g.Scrolls, g.Hint)
	}
	if g.Hint && g.HintRight > g.Box+60 {
		p.t.Errorf("%s: the scroll hint reaches %d px, past the screen", where, g.HintRight)
	}
	if !narrow && len(g.Cut) > 0 {
		p.t.Errorf("%s: names cut though the view has room: %q", where, g.Cut)
	}
	if narrow && !g.Scrolls {
		p.t.Errorf("%s: the drawing (%d px) fits a %d px box: the test expects a phone too narrow for it", where, g.Drawing, g.Box)
	}
}

// TestPlaygroundFirstHour drives what a newcomer meets at the page's edges: an ?artifact= that
// is missing or corrupt says so instead of "Loading the engine…"; the cold graph's note shows
// its commands as code, not Markdown backticks, and keeps to a few lines on a phone; and the
// min match knob hides a weak answer's skills, the status saying the answer's match.
func TestPlaygroundFirstHour(t *testing.T) {
	browser := chromiumPath(t)
	dir := t.TempDir()
	wasm := buildModule(t, dir)
	sampleSkg := filepath.Join(dir, "sample.skg")
	buildArtifact(t, "../graphs/sample", sampleSkg)
	srv, err := serve.New(serve.Options{Artifact: sampleSkg, Playground: ".", JS: "../wasm/js", WASM: wasm, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	mux.HandleFunc("/corrupt.skg", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("\x00CSKG this is not a graph")) })
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx := openBrowser(t, browser, dir, 3*time.Minute)
	p := &pageT{t: t, ctx: ctx}
	for _, bad := range []string{"missing.skg", "corrupt.skg"} {
		p.do("opening the page with "+bad, chromedp.Navigate(ts.URL+"/?artifact="+bad))
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("error").hidden`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: no error shown: %v", bad, err)
		}
		stats := evalJS[string](p, "reading the stats", `document.getElementById("stats").textContent`)
		if strings.Contains(stats, "Loading") || !strings.Contains(stats, "No skill graph loaded") {
			t.Errorf("%s: the stats line says %q after the load failed", bad, stats)
		}
	}

	p.do("emulating a phone", chromedp.EmulateViewport(375, 812))
	p.do("opening the page", chromedp.Navigate(ts.URL+"/"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("learning").dataset.cold === "true"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the cold note did not show: %v", err)
	}
	type banner struct {
		Visible string
		Codes   int
		Height  float64
		Line    float64
	}
	b := evalJS[banner](p, "reading the cold note", `(() => {
		const l = document.getElementById("learning");
		const how = l.querySelector("details");
		const visible = [...l.childNodes].filter((n) => n !== how).map((n) => n.textContent).join("") + (how ? how.querySelector("summary").textContent : "");
		return { Visible: visible, Codes: l.querySelectorAll("code").length, Height: l.getBoundingClientRect().height,
			Line: parseFloat(getComputedStyle(l).lineHeight) || 1.2 * parseFloat(getComputedStyle(l).fontSize) };
	})()`)
	if strings.Contains(b.Visible, "`") || b.Codes == 0 {
		t.Errorf("the cold note shows backticks or no code: %q, %d code elements", b.Visible, b.Codes)
	}
	if lines := b.Height / b.Line; lines > 3.5 {
		t.Errorf("the cold note fills %.1f lines at 375 px: %q", lines, b.Visible)
	}
	p.do("emulating a desktop", chromedp.EmulateViewport(1400, 900))

	const weak = "purple elephant bicycle sandwich"
	q, _ := json.Marshal(weak)
	evalJS[bool](p, "asking", `(() => { const q = document.getElementById("q"); q.value = `+string(q)+`; q.dispatchEvent(new Event("input")); return true; })()`)
	p.waitAnswer(weak, true)
	if n := evalJS[int](p, "counting results", `document.querySelectorAll("#results li").length`); n == 0 {
		t.Fatal("a weak answer at min match 0 lists no skill")
	}
	if s := evalJS[string](p, "reading the status", `document.getElementById("status").textContent`); !strings.Contains(s, ", match 0.") {
		t.Errorf("status %q lacks the answer's match", s)
	}
	evalJS[bool](p, "setting min match", `(() => { const m = document.getElementById("min-score"); m.value = "0.4"; m.dispatchEvent(new Event("input")); return true; })()`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#results li").length === 0 && document.getElementById("results").dataset.outcome === "ok"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("min match 0.4 left a weak answer's skills listed: %v", err)
	}
	if note := evalJS[string](p, "reading the note", `document.getElementById("query-note").textContent`); !strings.Contains(note, "no skill matches this task well") {
		t.Errorf("note %q, want the weak-match note", note)
	}
}
