package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// llmSkillDirs are the sample skills the LLM build tests use: a small, connected kitchen slice.
var llmSkillDirs = strings.Fields(`close-receptacle cool-object-in-fridge find-object
	heat-object-in-microwave heat-object-on-stove open-receptacle pick-up-object
	place-object-in-receptacle turn-off-stove-burner turn-on-stove-burner`)

const llmTestBudget = 6

// chatServer is an in-process OpenAI-compatible chat-completions endpoint that answers every
// prompt {"score": x} with x from a hash of the prompt, and counts what it was asked.
type chatServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	kinds    map[string]int // requests by prompt kind, recognized from the wording
	auth     map[string]int // Authorization headers seen
	models   map[string]int
	bad      []string
}

func newChatServer(t *testing.T) *chatServer {
	s := &chatServer{kinds: map[string]int{}, auth: map[string]int{}, models: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		for _, b := range s.bad {
			t.Errorf("chat server: %s", b)
		}
	})
	return s
}

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.bad = append(s.bad, r.Method+" "+r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		s.bad = append(s.bad, fmt.Sprintf("bad request body (%v)", err))
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	user := req.Messages[len(req.Messages)-1].Content
	kind := "unknown"
	switch {
	case strings.Contains(user, "has been removed from its library"):
		kind = "removal"
	case strings.Contains(user, "is replaced by skill S"):
		kind = "substitution"
	case strings.Contains(user, "run B first and A afterwards"):
		kind = "reorder"
	case strings.Contains(user, "support or precede skill B"):
		kind = "judge"
	default:
		s.bad = append(s.bad, fmt.Sprintf("prompt of no known kind: %q", user))
	}
	s.kinds[kind]++
	s.auth[r.Header.Get("Authorization")]++
	s.models[req.Model]++
	h := fnv.New32a()
	h.Write([]byte(user))
	content := fmt.Sprintf(`{"score": %v}`, float64(h.Sum32()%11)/10)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}}}})
}

func (s *chatServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *chatServer) kind(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kinds[k]
}

// llmEnv clears the LLM environment variables for the test.
func llmEnv(t *testing.T) {
	for _, v := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "CASKG_LLM_API_KEY"} {
		t.Setenv(v, "")
	}
}

func llmLibArgs() []string {
	args := make([]string, len(llmSkillDirs))
	for i, d := range llmSkillDirs {
		args[i] = filepath.Join(sampleLib, d)
	}
	return args
}

// buildArgs is `build LIB... -o out` followed by flags.
func buildArgs(out string, flags ...string) []string {
	args := append([]string{"build"}, llmLibArgs()...)
	if out != "" {
		args = append(args, "-o", out)
	}
	return append(args, flags...)
}

// probeLine reads the summary's "frontier N probed by P: R probes run, C cached, F failed".
func probeLine(t *testing.T, stdout string) (prober string, frontier, run, cached, failed int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^frontier\s+(\d+) probed by (\S+): (\d+) probes run, (\d+) cached, (\d+) failed$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no probes line in the summary:\n%s", stdout)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return m[2], n(m[1]), n(m[3]), n(m[4]), n(m[5])
}

func judgeLine(stdout string) int {
	m := regexp.MustCompile(`(?m)^judge\s+(\d+) candidates scored$`).FindStringSubmatch(stdout)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

func TestBuildLLM(t *testing.T) {
	llmEnv(t)
	t.Setenv("CASKG_LLM_API_KEY", "sekrit")
	srv := newChatServer(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	out := filepath.Join(dir, "out.skg")
	flags := []string{"--prober", "llm", "--llm-url", srv.srv.URL + "/v1", "--llm-model", "m",
		"--cache-dir", cache, "--budget", strconv.Itoa(llmTestBudget), "--llm-timeout", "5s", "--quiet"}

	r := mustRun(t, buildArgs(out, flags...)...)
	prober, frontier, ran, cached, failed := probeLine(t, r.stdout)
	judged := judgeLine(r.stdout)
	if prober != "llm" || frontier != llmTestBudget || ran != 3*frontier || cached != 0 || failed != 0 {
		t.Errorf("first build: probed by %s, frontier %d, run/cached/failed %d/%d/%d; want llm, %d, %d/0/0\n%s",
			prober, frontier, ran, cached, failed, llmTestBudget, 3*llmTestBudget, r.stdout)
	}
	if judged == 0 || srv.kind("judge") != judged {
		t.Errorf("summary says %d candidates judged, the server got %d judge prompts", judged, srv.kind("judge"))
	}
	if n := srv.count(); n != ran+judged {
		t.Errorf("the server got %d requests, want %d probes + %d judge prompts", n, ran, judged)
	}
	srv.mu.Lock()
	if srv.auth["Bearer sekrit"] != srv.requests || srv.models["m"] != srv.requests {
		t.Errorf("authorization headers %v and models %v; want every request with Bearer sekrit and model m", srv.auth, srv.models)
	}
	srv.mu.Unlock()
	if st, err := os.Stat(filepath.Join(cache, "llm")); err != nil || !st.IsDir() {
		t.Errorf("no answer cache under --cache-dir: %v", err)
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ins inspected
	decodeJSON(t, mustRun(t, "inspect", out, "--json").stdout, &ins)
	if ins.Skills != len(llmSkillDirs) || ins.Params["prober"] != "llm" || ins.Params["judge"] != "llm" {
		t.Errorf("inspect: %d skills, params prober %v, judge %v; want %d, llm, llm", ins.Skills,
			ins.Params["prober"], ins.Params["judge"], len(llmSkillDirs))
	}

	// Again: everything comes from the cache, the artifact is the same.
	before := srv.count()
	out2 := filepath.Join(dir, "again.skg")
	r = mustRun(t, buildArgs(out2, flags...)...)
	_, frontier2, ran, cached, failed := probeLine(t, r.stdout)
	if frontier2 != frontier || ran != 0 || cached != 3*frontier || failed != 0 {
		t.Errorf("rebuild: frontier %d, run/cached/failed %d/%d/%d; want %d, 0/%d/0", frontier2, ran, cached, failed,
			frontier, 3*frontier)
	}
	if n := srv.count() - before; n != 0 {
		t.Errorf("the rebuild made %d requests, want 0", n)
	}
	if second, err := os.ReadFile(out2); err != nil || !bytes.Equal(first, second) {
		t.Errorf("the rebuild's artifact differs from the first (%v)", err)
	}

	// A dry run counts the prompts and the calls not cached, asks nothing and writes nothing.
	for _, tc := range []struct {
		name  string
		cache string
		calls func(planned int) int
	}{
		{"cold cache", filepath.Join(dir, "cold"), func(planned int) int { return planned }},
		{"warm cache", cache, func(int) int { return 0 }},
	} {
		t.Run("dry run, "+tc.name, func(t *testing.T) {
			before := srv.count()
			dryOut := filepath.Join(dir, "dry.skg")
			dflags := append([]string{}, flags...)
			for i := range dflags {
				if dflags[i] == cache {
					dflags[i] = tc.cache
				}
			}
			r := mustRun(t, buildArgs("", append(dflags, "--dry-run")...)...)
			m := regexp.MustCompile(`^dry run: (\d+) skills, (\d+) candidates, frontier (\d+), (\d+) probes and judge prompts, (\d+) model calls not cached\n$`).FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("dry run output:\n%s", r.stdout)
			}
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			if n(1) != len(llmSkillDirs) || n(3) != frontier || n(4) != 3*frontier+judged || n(5) != tc.calls(3*frontier+judged) {
				t.Errorf("dry run says %q; want %d skills, frontier %d, %d prompts, %d calls", strings.TrimSpace(r.stdout),
					len(llmSkillDirs), frontier, 3*frontier+judged, tc.calls(3*frontier+judged))
			}
			if k := srv.count() - before; k != 0 {
				t.Errorf("the dry run made %d requests", k)
			}
			if _, err := os.Stat(dryOut); !os.IsNotExist(err) {
				t.Errorf("the dry run wrote an artifact (%v)", err)
			}
		})
	}
}

func TestBuildLLMFlags(t *testing.T) {
	llmEnv(t)
	srv := newChatServer(t)
	dir := t.TempDir()
	budget := []string{"--budget", strconv.Itoa(llmTestBudget), "--quiet"}

	t.Run("llm without a URL", func(t *testing.T) {
		for _, flags := range [][]string{
			{"--prober", "llm", "--llm-model", "m"},
			{"--prober", "llm", "--llm-url", srv.srv.URL + "/v1"}, // and without a model
		} {
			r := run(t, buildArgs(filepath.Join(dir, "x.skg"), append(flags, budget...)...)...)
			if r.code != 2 || !strings.Contains(r.stderr, "-llm-url") || !strings.Contains(r.stderr, "-llm-model") ||
				!strings.Contains(r.stderr, "usage: caskg build") {
				t.Errorf("%v: exit %d, stderr %q; want 2 and a usage message naming -llm-url and -llm-model", flags, r.code, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "x.skg")); !os.IsNotExist(err) {
			t.Errorf("a failed build wrote its artifact (%v)", err)
		}
	})

	t.Run("unknown prober", func(t *testing.T) {
		r := run(t, buildArgs(filepath.Join(dir, "x.skg"), append([]string{"--prober", "bogus"}, budget...)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "-prober") || !strings.Contains(r.stderr, `"bogus"`) {
			t.Errorf("exit %d, stderr %q; want 2 naming -prober and the bad value", r.code, r.stderr)
		}
	})

	t.Run("OPENAI_BASE_URL", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", srv.srv.URL+"/v1")
		before := srv.count()
		// A model given and a URL in the environment: the llm prober is the default.
		r := mustRun(t, buildArgs(filepath.Join(dir, "env.skg"),
			append([]string{"--llm-model", "m", "--cache-dir", filepath.Join(dir, "c1")}, budget...)...)...)
		prober, frontier, ran, _, _ := probeLine(t, r.stdout)
		if prober != "llm" || ran != 3*frontier || srv.count()-before != ran+judgeLine(r.stdout) {
			t.Errorf("probed by %s, %d probes run, %d requests; want llm and a request per probe and judge prompt",
				prober, ran, srv.count()-before)
		}
		// No model: the offline contract prober, no request.
		before = srv.count()
		r = mustRun(t, buildArgs(filepath.Join(dir, "contract.skg"), budget...)...)
		if prober, _, _, _, _ := probeLine(t, r.stdout); prober != "contract" || srv.count() != before {
			t.Errorf("without -llm-model: probed by %s, %d requests; want contract and none", prober, srv.count()-before)
		}
	})

	t.Run("no judge", func(t *testing.T) {
		for _, flags := range [][]string{{"--judge=false"}, {"--variant", "no-judge"}} {
			before := srv.kind("judge")
			args := append([]string{"--prober", "llm", "--llm-url", srv.srv.URL + "/v1", "--llm-model", "m",
				"--cache-dir", filepath.Join(dir, "c2")}, append(flags, budget...)...)
			r := mustRun(t, buildArgs(filepath.Join(dir, "nojudge.skg"), args...)...)
			if n := srv.kind("judge") - before; n != 0 || judgeLine(r.stdout) != 0 {
				t.Errorf("%v: %d judge prompts sent, summary:\n%s", flags, n, r.stdout)
			}
			if prober, _, _, _, _ := probeLine(t, r.stdout); prober != "llm" {
				t.Errorf("%v: probed by %s, want llm", flags, prober)
			}
		}
	})
}
