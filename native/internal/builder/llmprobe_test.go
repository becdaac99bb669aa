package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/llm"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// llmLib is a small, well-connected slice of the sample library for the LLM prober tests.
var llmLib = []string{
	"close-receptacle", "cool-object-in-fridge", "find-object", "heat-object-in-microwave",
	"heat-object-on-stove", "open-receptacle", "pick-up-object", "place-object-in-receptacle",
	"put-down-object", "turn-off-stove-burner", "turn-on-stove-burner", "verify-object-cold",
	"verify-object-hot",
}

const (
	llmBudget = 8   // frontier size of the LLM builds: 24 probes
	fakeModel = "m" // the model name the fake server expects
)

func llmSkills(t *testing.T) []ingest.Skill {
	t.Helper()
	paths := make([]string, len(llmLib))
	for i, n := range llmLib {
		paths[i] = filepath.Join(sampleLib, n)
	}
	skills := loadLib(t, paths...)
	if len(skills) != len(llmLib) {
		t.Fatalf("loaded %d skills, want %d", len(skills), len(llmLib))
	}
	return skills
}

// fakePrompt is a prompt as the fake server understood it.
type fakePrompt struct {
	llm.Prompt        // Kind recognized from the wording of probePrompt / judgePrompt
	A, B, S    string // the names of skills A, B and (substitution) S
}

func (p fakePrompt) edge() [2]string { return [2]string{p.A, p.B} }

// fakeReply is what a policy makes the server do with one request. The zero value is the
// normal answer.
type fakeReply struct {
	status     int           // HTTP status; 0 means 200
	retryAfter string        // Retry-After header of an error status
	content    string        // the message content instead of the normal answer (not a score)
	score      *float64      // the score to answer instead of fakeScore
	sleep      time.Duration // wait this long (or until the client gives up) before answering
}

// fakeLLM is an in-process OpenAI-compatible chat-completions server. It answers every
// prompt with a score derived from a hash of the prompt text, unless its policy says
// otherwise, and records what it was asked and what it answered.
type fakeLLM struct {
	srv   *httptest.Server
	conns atomic.Int64 // open client connections

	mu       sync.Mutex
	policy   func(p fakePrompt, attempt int) fakeReply // called under mu; nil: always answer
	requests int                                       // HTTP requests received
	attempts map[string]int                            // requests by user text
	answered map[string]int                            // times each user text got a score
	prompts  map[string]fakePrompt                     // every prompt seen, by user text
	scores   map[string]float64                        // the score answered, by user text
	problems []string                                  // protocol violations
}

func newFakeLLM(t *testing.T) *fakeLLM {
	f := &fakeLLM{attempts: map[string]int{}, answered: map[string]int{},
		prompts: map[string]fakePrompt{}, scores: map[string]float64{}}
	f.srv = httptest.NewUnstartedServer(f) // listens on 127.0.0.1
	f.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			f.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			f.conns.Add(-1)
		}
	}
	f.srv.Start()
	t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.problems {
			t.Errorf("fake LLM server: %s", p)
		}
	})
	return f
}

// disconnect closes every client connection and waits until their handlers have returned,
// so that no request of an abandoned client reaches the server later.
func (f *fakeLLM) disconnect(t *testing.T) {
	t.Helper()
	f.srv.CloseClientConnections()
	for deadline := time.Now().Add(5 * time.Second); f.conns.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d client connections still open", f.conns.Load())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (f *fakeLLM) url() string { return f.srv.URL + "/v1" }

func (f *fakeLLM) setPolicy(p func(fakePrompt, int) fakeReply) {
	f.mu.Lock()
	f.policy = p
	f.mu.Unlock()
}

// reset forgets what was asked (not the policy).
func (f *fakeLLM) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = 0
	f.attempts, f.answered = map[string]int{}, map[string]int{}
	f.prompts, f.scores = map[string]fakePrompt{}, map[string]float64{}
}

func (f *fakeLLM) problem(format string, a ...any) {
	f.mu.Lock()
	f.problems = append(f.problems, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// fakeScore is the server's normal answer to a prompt: one of 0, .1, …, 1.
func fakeScore(user string) float64 { return float64(fnv32(user)%11) / 10 }

// fakeContent writes a score the way different models do; all must parse.
func fakeContent(score float64, user string) string {
	switch (fnv32(user) >> 8) % 3 {
	case 0:
		return fmt.Sprintf(`{"score": %v}`, score)
	case 1:
		return fmt.Sprintf("```json\n{\"score\": %v}\n```", score)
	}
	return fmt.Sprintf("Considering both skills, my estimate is %v", score)
}

var (
	reSkillA = regexp.MustCompile(`(?m)^Skill A:\nname: (.+)$`)
	reSkillB = regexp.MustCompile(`(?m)^Skill B:\nname: (.+)$`)
	reSkillS = regexp.MustCompile(`(?m)^Skill S:\nname: (.+)$`)
)

// parseFakePrompt recognizes the kind of prompt from its wording and the skills it names.
func parseFakePrompt(system, user string) (fakePrompt, error) {
	p := fakePrompt{Prompt: llm.Prompt{System: system, User: user}}
	switch {
	case strings.Contains(user, "has been removed from its library"):
		p.Kind = "removal"
	case strings.Contains(user, "is replaced by skill S"):
		p.Kind = "substitution"
	case strings.Contains(user, "run B first and A afterwards"):
		p.Kind = "reorder"
	case strings.Contains(user, "support or precede skill B"):
		p.Kind = "judge"
	default:
		return p, fmt.Errorf("prompt of no known kind: %q", user)
	}
	name := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(user); m != nil {
			return m[1]
		}
		return ""
	}
	p.A, p.B, p.S = name(reSkillA), name(reSkillB), name(reSkillS)
	if p.A == "" || p.B == "" || p.A == p.B || (p.Kind == "substitution") != (p.S != "") ||
		(p.S != "" && (p.S == p.A || p.S == p.B)) {
		return p, fmt.Errorf("%s prompt with skills A %q, B %q, S %q", p.Kind, p.A, p.B, p.S)
	}
	return p, nil
}

type chatReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.problem("%s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req chatReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.problem("request body: %v", err)
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if req.Model != fakeModel || len(req.Messages) != 2 || req.Messages[0].Role != "system" ||
		req.Messages[1].Role != "user" || !strings.Contains(req.Messages[0].Content, `{"score": x}`) {
		f.problem("unexpected request: %+v", req)
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	user := req.Messages[1].Content
	p, err := parseFakePrompt(req.Messages[0].Content, user)
	if err != nil {
		f.problem("%v", err)
		http.Error(w, `{"error":{"message":"bad prompt"}}`, http.StatusBadRequest)
		return
	}

	f.mu.Lock()
	f.requests++
	f.prompts[user] = p
	attempt := f.attempts[user]
	f.attempts[user]++
	var rep fakeReply
	if f.policy != nil {
		rep = f.policy(p, attempt)
	}
	score := fakeScore(user)
	if rep.score != nil {
		score = *rep.score
	}
	ok := (rep.status == 0 || rep.status == http.StatusOK) && rep.content == ""
	if ok && rep.sleep == 0 {
		f.answered[user]++
		f.scores[user] = score
	}
	f.mu.Unlock()

	if rep.sleep > 0 {
		select {
		case <-time.After(rep.sleep):
		case <-r.Context().Done():
			return // the client gave up: nothing answered
		}
		if ok {
			f.mu.Lock()
			f.answered[user]++
			f.scores[user] = score
			f.mu.Unlock()
		}
	}
	if rep.status != 0 && rep.status != http.StatusOK {
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		fmt.Fprintf(w, `{"error":{"message":"fake status %d"}}`, rep.status)
		return
	}
	content := rep.content
	if content == "" {
		content = fakeContent(score, user)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	})
}

// snapshot returns copies of the server's records.
func (f *fakeLLM) snapshot() (requests int, answered map[string]int, prompts map[string]fakePrompt, scores map[string]float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answered = make(map[string]int, len(f.answered))
	for k, v := range f.answered {
		answered[k] = v
	}
	prompts = make(map[string]fakePrompt, len(f.prompts))
	for k, v := range f.prompts {
		prompts[k] = v
	}
	scores = make(map[string]float64, len(f.scores))
	for k, v := range f.scores {
		scores[k] = v
	}
	return f.requests, answered, prompts, scores
}

func (f *fakeLLM) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// newLLMClient is a client of f with a cache in dir, tiny backoffs and a short timeout.
func newLLMClient(t *testing.T, f *fakeLLM, dir string, mod ...func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{URL: f.url(), Model: fakeModel, CacheDir: dir, Concurrency: 4, Retries: 2,
		Timeout: 2 * time.Second, BaseBackoff: time.Millisecond}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func llmOptions(c *llm.Client) Options {
	opt := DefaultOptions()
	opt.Budget = llmBudget
	p := &LLMProber{Client: c}
	opt.Prober, opt.Judge = p, p
	return opt
}

// llmBuild builds skills with client c as prober and judge.
func llmBuild(t *testing.T, ctx context.Context, skills []ingest.Skill, c *llm.Client) ([]byte, *Report, error) {
	t.Helper()
	return buildOf(ctx, skills, llmOptions(c))
}

// byKind counts the prompts by kind.
func byKind(users map[string]int, prompts map[string]fakePrompt) map[string]int {
	out := map[string]int{}
	for u := range users {
		out[prompts[u].Kind]++
	}
	return out
}

// failFirst is a policy that gives the first n distinct prompts of kind the reply r, on every
// attempt, and the normal answer to all others; marked holds the user texts of those n. The
// server calls the policy under its lock.
func failFirst(kind string, n int, r fakeReply) (policy func(fakePrompt, int) fakeReply, marked map[string]bool) {
	marked = map[string]bool{}
	return func(p fakePrompt, attempt int) fakeReply {
		if p.Kind == kind && (marked[p.User] || len(marked) < n) {
			marked[p.User] = true
			return r
		}
		return fakeReply{}
	}, marked
}

// checkFailed checks that exactly n probes failed and all others ran, and that the report
// keeps a sample of the first five failures, each starting with the probe kind and passing has
// (it has what names).
func checkFailed(t *testing.T, rep *Report, kind string, n int, names string, has func(sample string) bool) {
	t.Helper()
	if rep.ProbesFailed != n || rep.ProbesRun != 3*rep.Frontier-n {
		t.Errorf("probes run %d, failed %d; want %d, %d", rep.ProbesRun, rep.ProbesFailed, 3*rep.Frontier-n, n)
	}
	if len(rep.FailedSamples) != min(5, n) {
		t.Errorf("failed samples %q, want %d", rep.FailedSamples, min(5, n))
	}
	for _, s := range rep.FailedSamples {
		if !strings.HasPrefix(s, kind+" ") || !has(s) {
			t.Errorf("failed sample %q does not name the %s probe and %s", s, kind, names)
		}
	}
}

// checkCalibration recomputes, from the scores the server answered, the posterior, state and
// weight of every probed edge and checks them against the artifact: failed probes must be
// left out of the evidence. It returns the expected state of every frontier edge.
func checkCalibration(t *testing.T, data []byte, rep *Report, f *fakeLLM, opt Options) map[[2]string]graphs.State {
	t.Helper()
	_, answered, prompts, scores := f.snapshot()
	evidence := map[[2]string]map[string]float64{}
	frontier := map[[2]string]bool{}
	for u, p := range prompts {
		if p.Kind == "judge" {
			continue
		}
		frontier[p.edge()] = true
		if answered[u] == 0 {
			continue // failed: no evidence
		}
		m := evidence[p.edge()]
		if m == nil {
			m = map[string]float64{}
			evidence[p.edge()] = m
		}
		if _, dup := m[p.Kind]; dup {
			t.Errorf("edge %v: two %s prompts", p.edge(), p.Kind)
		}
		m[p.Kind] = scores[u]
	}
	if len(frontier) != rep.Frontier {
		t.Errorf("the server was asked about %d edges, report.Frontier = %d", len(frontier), rep.Frontier)
	}

	g := fixture.Decode(t, data)
	type pub struct {
		state         graphs.State
		weight, assoc float64
	}
	published := map[[2]string]pub{}
	for i := range g.NumSkills() {
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			published[[2]string{g.Name(i), g.Name(g.Target(e))}] = pub{g.State(e), float64(g.Weight(e)), float64(g.Assoc(e))}
		}
	}
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

	want := map[[2]string]graphs.State{}
	calibrated := map[string]int{}
	for e := range frontier {
		var ev []float64
		for _, k := range []string{"removal", "substitution", "reorder"} {
			if v, ok := evidence[e][k]; ok {
				ev = append(ev, v)
			}
		}
		_, _, c := posterior(ev, opt.EpsE)
		st := stateOf(c, opt.TauConfirm, opt.TauReject)
		want[e] = st
		calibrated[st.String()]++
		p, ok := published[e]
		switch {
		case st == graphs.Rejected:
			if ok {
				t.Errorf("edge %v: evidence %v gives c = %.3f (rejected) but it is published as %v", e, ev, c, p.state)
			}
		case !ok:
			t.Errorf("edge %v: evidence %v gives c = %.3f (%v) but it is not published", e, ev, c, st)
		case p.state != st:
			t.Errorf("edge %v: evidence %v gives c = %.3f, state %v; the artifact says %v", e, ev, c, st, p.state)
		default:
			rho := opt.RhoConfirmed
			if st == graphs.Uncertain {
				rho = opt.RhoUncertain
			}
			if w := edgeWeight(p.assoc, c, rho, opt.EpsWeight); !close(float64(float32(w)), p.weight) {
				t.Errorf("edge %v (%v, A %.4f, c %.4f): weight %v, want %v", e, st, p.assoc, c, p.weight, w)
			}
		}
	}
	for e, p := range published {
		if frontier[e] {
			continue
		}
		if p.state != graphs.Scaffold {
			t.Errorf("edge %v was never probed but is published as %v", e, p.state)
		} else if w := edgeWeight(p.assoc, 0, opt.RhoScaffold, opt.EpsWeight); !close(float64(float32(w)), p.weight) {
			t.Errorf("scaffold edge %v: weight %v, want %v", e, p.weight, w)
		}
	}
	for _, st := range []graphs.State{graphs.Confirmed, graphs.Uncertain, graphs.Rejected} {
		if rep.Calibrated[st.String()] != calibrated[st.String()] {
			t.Errorf("report.Calibrated[%s] = %d, the server's answers give %d", st, rep.Calibrated[st.String()], calibrated[st.String()])
		}
	}
	return want
}

// referenceBuild is an LLM build of llmSkills that nothing disturbs.
func referenceBuild(t *testing.T, skills []ingest.Skill) ([]byte, *Report) {
	t.Helper()
	f := newFakeLLM(t)
	data, rep, err := llmBuild(t, context.Background(), skills, newLLMClient(t, f, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return data, rep
}

func TestLLMProberEndToEnd(t *testing.T) {
	skills := llmSkills(t)
	f := newFakeLLM(t)
	client := newLLMClient(t, f, t.TempDir())
	opt := llmOptions(client)
	data, rep, err := buildOf(context.Background(), skills, opt)
	if err != nil {
		t.Fatal(err)
	}
	requests, answered, prompts, _ := f.snapshot()
	kinds := byKind(answered, prompts)
	t.Logf("frontier %d, judge %d, calibrated %v, published %v", rep.Frontier, rep.JudgeCalls, rep.Calibrated, rep.ByState)

	if rep.Frontier != llmBudget {
		t.Fatalf("report.Frontier = %d, want the budget %d", rep.Frontier, llmBudget)
	}
	if rep.Prober != "llm" {
		t.Errorf("report.Prober = %q, want llm", rep.Prober)
	}
	if rep.ProbesRun != 3*rep.Frontier || rep.ProbesCached != 0 || rep.ProbesFailed != 0 || len(rep.FailedSamples) != 0 {
		t.Errorf("probes run/cached/failed = %d/%d/%d (samples %q), want %d/0/0",
			rep.ProbesRun, rep.ProbesCached, rep.ProbesFailed, rep.FailedSamples, 3*rep.Frontier)
	}
	for _, k := range []string{"removal", "substitution", "reorder"} {
		if kinds[k] != rep.Frontier {
			t.Errorf("the server answered %d %s prompts, want one per frontier edge (%d)", kinds[k], k, rep.Frontier)
		}
	}
	if rep.JudgeCalls == 0 {
		t.Errorf("no judge calls: no candidate of the test library passes the judge gate %v", opt.JudgeGate)
	}
	if kinds["judge"] != rep.JudgeCalls {
		t.Errorf("report.JudgeCalls = %d, the server answered %d judge prompts", rep.JudgeCalls, kinds["judge"])
	}
	if want := 3*rep.Frontier + rep.JudgeCalls; requests != want || len(answered) != want {
		t.Errorf("the server had %d requests for %d distinct prompts, want %d of each", requests, len(answered), want)
	}
	for u, n := range answered {
		if n != 1 {
			t.Errorf("%s prompt about %v answered %d times", prompts[u].Kind, prompts[u].edge(), n)
		}
	}
	s := client.Stats()
	if int(s.Calls) != requests || s.Retries != 0 || s.Failed != 0 || s.Cached != 0 {
		t.Errorf("client stats %+v, want %d calls and nothing else", s, requests)
	}

	// The judge's candidates are those whose preliminary A passes the gate: a dry run (which
	// does not run the judge) counts them among its planned prompts.
	dry := opt
	dry.DryRun = true
	_, drep, err := buildOf(context.Background(), skills, dry)
	if err != nil {
		t.Fatal(err)
	}
	if got := drep.PlannedProbes - 3*drep.Frontier; got != rep.JudgeCalls {
		t.Errorf("dry run plans %d judge prompts, the build made %d judge calls", got, rep.JudgeCalls)
	}

	states := checkCalibration(t, data, rep, f, opt)
	seen := map[graphs.State]bool{}
	for _, st := range states {
		seen[st] = true
	}
	if len(seen) < 2 {
		t.Errorf("every frontier edge ends %v: the test does not tell states apart", states)
	}

	// The artifact records the prober and the judge.
	g := fixture.Decode(t, data)
	var params map[string]any
	if err := json.Unmarshal(g.Params(), &params); err != nil {
		t.Fatal(err)
	}
	if params["prober"] != "llm" || params["judge"] != "llm" {
		t.Errorf("artifact params prober %v, judge %v; want llm, llm", params["prober"], params["judge"])
	}
}

func TestLLMProberFailures(t *testing.T) {
	skills := llmSkills(t)
	want, _ := referenceBuild(t, skills)

	t.Run("429 then success", func(t *testing.T) {
		f := newFakeLLM(t)
		f.setPolicy(func(p fakePrompt, attempt int) fakeReply {
			if attempt == 0 {
				return fakeReply{status: http.StatusTooManyRequests, retryAfter: "0"}
			}
			return fakeReply{}
		})
		client := newLLMClient(t, f, t.TempDir(), func(c *llm.Config) { c.BaseBackoff = 10 * time.Second })
		start := time.Now()
		data, rep, err := llmBuild(t, context.Background(), skills, client)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("build took %v: Retry-After: 0 should override the 10s backoff", d)
		}
		requests, answered, _, _ := f.snapshot()
		s := client.Stats()
		if rep.ProbesFailed != 0 || rep.ProbesRun != 3*rep.Frontier {
			t.Errorf("probes run %d, failed %d; want %d, 0", rep.ProbesRun, rep.ProbesFailed, 3*rep.Frontier)
		}
		if s.Retries == 0 || int(s.Retries) != len(answered) || requests != 2*len(answered) {
			t.Errorf("%d requests, %d prompts answered, client retries %d; want one 429 and one retry per prompt",
				requests, len(answered), s.Retries)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("the artifact differs from an undisturbed build")
		}
	})

	t.Run("persistent 500", func(t *testing.T) {
		// The removal probe of every third edge always fails; the other two probes of those
		// edges answer 1. Evidence {1, 1} gives c = 3/4 = .75, confirmed, at weight
		// max(A, .75); were the failure read as 0.5, c would be 3/4.1 ≈ .73 and the weight
		// would show it (checkCalibration).
		failing := func(p fakePrompt) bool { return p.Kind != "judge" && fnv32(p.A+"\x00"+p.B)%3 == 0 }
		one := 1.0
		f := newFakeLLM(t)
		f.setPolicy(func(p fakePrompt, attempt int) fakeReply {
			switch {
			case !failing(p):
				return fakeReply{}
			case p.Kind == "removal":
				return fakeReply{status: http.StatusInternalServerError}
			}
			return fakeReply{score: &one}
		})
		client := newLLMClient(t, f, t.TempDir(), func(c *llm.Config) { c.Retries = 1 })
		opt := llmOptions(client)
		data, rep, err := buildOf(context.Background(), skills, opt)
		if err != nil {
			t.Fatal(err)
		}
		_, answered, prompts, _ := f.snapshot()
		failed := 0
		for u, p := range prompts {
			if p.Kind == "removal" && failing(p) {
				failed++
				if answered[u] != 0 {
					t.Errorf("failing prompt %v answered", p.edge())
				}
			}
		}
		if failed == 0 {
			t.Fatal("no frontier edge was chosen to fail; change the selection")
		}
		checkFailed(t, rep, "removal", failed, "HTTP 500", func(s string) bool { return strings.Contains(s, "HTTP 500") })
		states := checkCalibration(t, data, rep, f, opt)
		for _, p := range prompts {
			if p.Kind == "removal" && failing(p) {
				if st := states[p.edge()]; st != graphs.Confirmed {
					t.Errorf("edge %v with a failed removal probe and two answers 1 is %v, want confirmed", p.edge(), st)
				}
			}
		}
		if s := client.Stats(); s.Failed != int64(failed) || s.Retries != int64(failed) {
			t.Errorf("client stats %+v, want %d failed and %d retries", s, failed, failed)
		}
	})

	t.Run("timeouts", func(t *testing.T) {
		// The first two reorder prompts the server sees never get an answer in time.
		f := newFakeLLM(t)
		policy, _ := failFirst("reorder", 2, fakeReply{sleep: 5 * time.Second})
		f.setPolicy(policy)
		client := newLLMClient(t, f, t.TempDir(), func(c *llm.Config) {
			c.Timeout, c.Retries = 200*time.Millisecond, 1
		})
		opt := llmOptions(client)
		data, rep, err := buildOf(context.Background(), skills, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkFailed(t, rep, "reorder", 2, "the timeout", func(s string) bool { return strings.Contains(s, "Config.Timeout") })
		if s := client.Stats(); s.Failed != 2 || s.Retries < 2 {
			t.Errorf("client stats %+v, want 2 failed after a retry each", s)
		}
		checkCalibration(t, data, rep, f, opt)
	})

	t.Run("garbage", func(t *testing.T) {
		const garbage = "I think it is fine"
		f := newFakeLLM(t)
		policy, bad := failFirst("substitution", 3, fakeReply{content: garbage})
		f.setPolicy(policy)
		dir := t.TempDir()
		client := newLLMClient(t, f, dir)
		opt := llmOptions(client)
		data, rep, err := buildOf(context.Background(), skills, opt)
		if err != nil {
			t.Fatal(err)
		}
		raw := fmt.Sprintf("%q", garbage)
		checkFailed(t, rep, "substitution", 3, "the raw answer "+raw, func(s string) bool { return strings.HasSuffix(s, raw) })
		if s := client.Stats(); s.Failed != 3 || s.Retries != 0 {
			t.Errorf("client stats %+v, want 3 failed, no retries (an unparseable answer is not retried)", s)
		}
		checkCalibration(t, data, rep, f, opt)

		// Garbage is never cached: a rebuild asks exactly those three prompts again.
		f.reset()
		_, rep2, err := llmBuild(t, context.Background(), skills, newLLMClient(t, f, dir))
		if err != nil {
			t.Fatal(err)
		}
		requests, _, prompts, _ := f.snapshot()
		if requests != 3 {
			t.Errorf("the rebuild made %d requests, want 3 (the garbage answers)", requests)
		}
		for u := range prompts {
			if !bad[u] {
				t.Errorf("the rebuild asked again the answered %s prompt about %v", prompts[u].Kind, prompts[u].edge())
			}
		}
		if rep2.ProbesCached != 3*rep2.Frontier-3 || rep2.ProbesFailed != 3 || rep2.ProbesRun != 0 {
			t.Errorf("rebuild probes run/cached/failed %d/%d/%d, want 0/%d/3", rep2.ProbesRun, rep2.ProbesCached,
				rep2.ProbesFailed, 3*rep2.Frontier-3)
		}
	})
}

func TestLLMBuildResume(t *testing.T) {
	skills := llmSkills(t)
	want, wantRep := referenceBuild(t, skills)
	// Cancel in the middle of the probes: after the judge prompts and half the probes.
	stopAfter := wantRep.JudgeCalls + 3*wantRep.Frontier/2

	const concurrency = 4
	dir := t.TempDir()
	f := newFakeLLM(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answeredSoFar := 0
	f.setPolicy(func(p fakePrompt, attempt int) fakeReply {
		if answeredSoFar >= stopAfter {
			cancel() // the build is killed; this request never gets its answer
			return fakeReply{sleep: time.Minute}
		}
		answeredSoFar++
		return fakeReply{}
	})
	c1 := newLLMClient(t, f, dir, func(c *llm.Config) { c.Concurrency = concurrency })
	data, _, err := llmBuild(t, ctx, skills, c1)
	if err == nil || !errors.Is(err, context.Canceled) || data != nil {
		t.Fatalf("cancelled build: data %d bytes, error %v; want no data and context.Canceled", len(data), err)
	}
	if !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("error %q does not say the build was interrupted", err)
	}
	// Requests in flight at the cancellation may still be on the wire: let them land (and
	// go unanswered) before the second run.
	f.disconnect(t)
	_, answered1, prompts1, _ := f.snapshot()

	// What run 1 left in the cache, asked of a fresh client. Answers whose request was in flight
	// at the cancellation may have been lost on the way.
	c2 := newLLMClient(t, f, dir)
	cached := map[string]bool{}
	cachedProbes, cachedJudge := 0, 0
	for u := range answered1 {
		p := prompts1[u]
		if c2.Cached(p.Prompt) {
			cached[u] = true
			if p.Kind == "judge" {
				cachedJudge++
			} else {
				cachedProbes++
			}
		}
	}
	if lost := len(answered1) - len(cached); lost > concurrency {
		t.Errorf("%d prompts answered in the first run are not cached; at most %d could be in flight", lost, concurrency)
	}
	if cachedJudge != wantRep.JudgeCalls || cachedProbes == 0 || cachedProbes >= 3*wantRep.Frontier {
		t.Errorf("the first run cached %d judge answers and %d probe answers; want all %d judge answers and some probes",
			cachedJudge, cachedProbes, wantRep.JudgeCalls)
	}
	t.Logf("first run: %d answered, %d cached (%d probes)", len(answered1), len(cached), cachedProbes)

	f.reset()
	f.setPolicy(nil)
	data, rep, err := llmBuild(t, context.Background(), skills, c2)
	if err != nil {
		t.Fatal(err)
	}
	_, answered2, prompts2, _ := f.snapshot()
	for u := range prompts2 {
		if cached[u] {
			t.Errorf("the resumed build asked again the %s prompt about %v answered in the first run", prompts2[u].Kind, prompts2[u].edge())
		}
	}
	for u, n := range answered2 {
		if n != 1 {
			t.Errorf("the resumed build had the %s prompt about %v answered %d times", prompts2[u].Kind, prompts2[u].edge(), n)
		}
		if answered1[u] > 0 && cached[u] {
			t.Errorf("prompt answered in both runs: %s %v", prompts2[u].Kind, prompts2[u].edge())
		}
	}
	if rep.ProbesCached != cachedProbes || rep.ProbesRun != 3*rep.Frontier-cachedProbes || rep.ProbesFailed != 0 {
		t.Errorf("resumed build probes run/cached/failed %d/%d/%d, want %d/%d/0",
			rep.ProbesRun, rep.ProbesCached, rep.ProbesFailed, 3*rep.Frontier-cachedProbes, cachedProbes)
	}
	if len(answered1)+len(answered2)-(len(answered1)-len(cached)) != 3*wantRep.Frontier+wantRep.JudgeCalls {
		t.Errorf("the two runs got %d + %d answers (%d lost in flight), want %d in all",
			len(answered1), len(answered2), len(answered1)-len(cached), 3*wantRep.Frontier+wantRep.JudgeCalls)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("the resumed build's artifact differs from an uninterrupted build")
	}
}

func TestLLMRebuildFromCache(t *testing.T) {
	skills := llmSkills(t)
	dir := t.TempDir()
	f := newFakeLLM(t)
	first, rep1, err := llmBuild(t, context.Background(), skills, newLLMClient(t, f, dir))
	if err != nil {
		t.Fatal(err)
	}
	f.reset()
	client := newLLMClient(t, f, dir)
	second, rep2, err := llmBuild(t, context.Background(), skills, client)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.requestCount(); n != 0 {
		t.Errorf("the rebuild made %d HTTP requests, want 0", n)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("the rebuild's artifact differs (%d vs %d bytes)", len(second), len(first))
	}
	if rep2.ProbesRun != 0 || rep2.ProbesCached != 3*rep1.Frontier || rep2.ProbesFailed != 0 || rep2.JudgeCalls != rep1.JudgeCalls {
		t.Errorf("rebuild probes run/cached/failed %d/%d/%d, judge %d; want 0/%d/0, judge %d",
			rep2.ProbesRun, rep2.ProbesCached, rep2.ProbesFailed, rep2.JudgeCalls, 3*rep1.Frontier, rep1.JudgeCalls)
	}
	if s := client.Stats(); s.Calls != 0 || int(s.Cached) != 3*rep1.Frontier+rep1.JudgeCalls {
		t.Errorf("client stats %+v, want no calls and %d cached", s, 3*rep1.Frontier+rep1.JudgeCalls)
	}
}

// TestLLMDryRun: a dry run counts the probes and judge prompts a build would ask (3·|F| plus
// the gated candidates) and, of those, the ones not cached; it asks nothing and builds nothing.
// After a full build on the same cache it plans no call.
func TestLLMDryRun(t *testing.T) {
	skills := llmSkills(t)
	for _, withJudge := range []bool{false, true} {
		t.Run(fmt.Sprintf("judge=%v", withJudge), func(t *testing.T) {
			dir := t.TempDir()
			f := newFakeLLM(t)
			options := func() Options {
				opt := llmOptions(newLLMClient(t, f, dir))
				if !withJudge {
					opt.Judge = nil
				}
				return opt
			}
			dry := func() *Report {
				t.Helper()
				opt := options()
				opt.DryRun = true
				data, rep, err := buildOf(context.Background(), skills, opt)
				if err != nil {
					t.Fatal(err)
				}
				if data != nil {
					t.Errorf("dry run returned %d bytes of artifact", len(data))
				}
				if n := f.requestCount(); n != 0 {
					t.Errorf("dry run made %d HTTP requests", n)
				}
				return rep
			}
			before := dry()
			_, rep, err := buildOf(context.Background(), skills, options())
			if err != nil {
				t.Fatal(err)
			}
			requests := f.requestCount()
			f.reset()
			after := dry()

			if withJudge != (rep.JudgeCalls > 0) {
				t.Fatalf("build with judge %v made %d judge calls", withJudge, rep.JudgeCalls)
			}
			total := 3*rep.Frontier + rep.JudgeCalls
			if requests != total {
				t.Errorf("the build made %d requests, want %d", requests, total)
			}
			if before.Frontier != rep.Frontier || before.PlannedProbes != total || before.PlannedCalls != total {
				t.Errorf("dry run before the build: frontier %d, planned %d prompts, %d calls; the build had frontier %d and made %d calls",
					before.Frontier, before.PlannedProbes, before.PlannedCalls, rep.Frontier, requests)
			}
			if before.ProbesRun+before.ProbesCached+before.JudgeCalls+before.Published != 0 {
				t.Errorf("dry run report counts work done: %+v", before)
			}
			if after.PlannedProbes != total || after.PlannedCalls != 0 {
				t.Errorf("dry run after the build: planned %d prompts, %d calls; want %d, 0 (everything is cached)",
					after.PlannedProbes, after.PlannedCalls, total)
			}
		})
	}
}
