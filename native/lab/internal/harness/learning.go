package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// Markers of the docs/evaluation-results.md span the learning curve is written into (WriteLearning).
const (
	LearningBegin = "<!-- learning:begin -->"
	LearningEnd   = "<!-- learning:end -->"
	// The span of the curves through caskg gateway (native/lab/internal/gatewaycurve).
	GatewayLearningBegin = "<!-- gateway-learning:begin -->"
	GatewayLearningEnd   = "<!-- gateway-learning:end -->"
)

// learnSteps are the numbers of runs seen after which the learning curve is measured; every
// curve also ends at all its runs.
var learnSteps = []int{0, 50, 200, 1000}

// LearnSpec is one learning curve: a library built without runs, then taught its training runs
// as feedback through caskg serve's POST /v1/feedback, in batches, with caskg update after each
// batch and a full caskg build with the same runs beside it.
type LearnSpec struct {
	Label     string          // the set's name in tables and the plot
	Library   string          // the library path given to caskg build
	Tasks     []eval.Task     // the test tasks every artifact is scored on
	TasksFile string          // names the tasks in the result
	Runs      []builder.Trace // the training runs, replayed in file order
	RunsFile  string
	Steps     []int // runs seen at each point; default learnSteps (and all)
	// TaskText sends each run's task as the report's query and has the server keep it in the
	// log (caskg serve --feedback-query-text), so the builds learn a memory of past tasks too;
	// off, the query is "replayed run ID" and the log keeps no task.
	TaskText bool
	Dir      string // work folder for artifacts, states and the feedback log
	// Caskg runs a caskg command line (build, update) and returns its error: the same code
	// as the caskg binary (cli.Run), in process.
	Caskg func(args ...string) error
}

// LearnPoint is the curve at one number of runs seen.
type LearnPoint struct {
	Seen      int     `json:"seen"`       // runs sent as feedback so far
	Update    float64 `json:"update"`     // COMP@10 of the artifact caskg update made
	Rebuild   float64 `json:"rebuild"`    // COMP@10 of a full caskg build with the same runs
	Identical bool    `json:"identical"`  // the two artifacts are the same bytes
	Mode      string  `json:"mode"`       // the update's mode: incremental or full
	UpdateSec float64 `json:"update_sec"` // wall-clock seconds (not deterministic)
	BuildSec  float64 `json:"build_sec"`
}

// LearnCurve is one set's learning curve.
type LearnCurve struct {
	Label    string       `json:"label"`
	Library  string       `json:"library"`
	Tasks    string       `json:"tasks"`
	NumTasks int          `json:"num_tasks"`
	Runs     string       `json:"runs"`
	Accepted int          `json:"accepted"` // feedback reports the server took
	Refused  int          `json:"refused"`  // ... and refused (e.g. a name not in the library)
	Points   []LearnPoint `json:"points"`
}

// Learn measures one learning curve (see LearnSpec).
func Learn(ctx context.Context, s LearnSpec) (*LearnCurve, error) {
	if s.Caskg == nil || s.Dir == "" || len(s.Runs) == 0 {
		return nil, errors.New("harness: learn: Caskg, Dir and Runs are required")
	}
	steps := s.Steps
	if steps == nil {
		steps = learnSteps
	}
	var at []int
	for _, n := range steps {
		if n >= 0 && n < len(s.Runs) && !slices.Contains(at, n) {
			at = append(at, n)
		}
	}
	slices.Sort(at)
	at = append(at, len(s.Runs))
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	file := func(name string) string { return filepath.Join(s.Dir, name) }
	cur := file("learn-0.skg")
	if err := s.Caskg("build", s.Library, "--state", "--quiet", "-o", cur); err != nil {
		return nil, fmt.Errorf("harness: learn: build %s: %w", s.Library, err)
	}
	fbPath := file("feedback.jsonl")
	os.Remove(fbPath)
	srv, err := startFeedbackServer(cur, fbPath, s.Dir, len(s.Runs), s.TaskText)
	if err != nil {
		return nil, err
	}
	defer srv.close()

	lc := &LearnCurve{Label: s.Label, Library: s.Library, Tasks: s.TasksFile, NumTasks: len(s.Tasks), Runs: s.RunsFile}
	sent := 0
	for _, n := range at {
		for ; sent < n; sent++ {
			ok, err := srv.report(ctx, s.Runs[sent], sent, s.TaskText)
			if err != nil {
				return nil, err
			}
			if ok {
				lc.Accepted++
			} else {
				lc.Refused++
			}
		}
		p := LearnPoint{Seen: n, Mode: "build", Identical: true}
		if n > 0 {
			next, full := file(fmt.Sprintf("learn-%d.skg", n)), file(fmt.Sprintf("rebuild-%d.skg", n))
			report := file("update-report.json")
			t := time.Now()
			if err := s.Caskg("update", cur, "--traces", fbPath, "--quiet", "--report", report, "-o", next); err != nil {
				return nil, fmt.Errorf("harness: learn: update after %d runs: %w", n, err)
			}
			p.UpdateSec = time.Since(t).Seconds()
			var rep struct {
				Update struct {
					Mode string `json:"mode"`
				} `json:"update"`
			}
			if raw, err := os.ReadFile(report); err == nil {
				json.Unmarshal(raw, &rep)
			}
			p.Mode = rep.Update.Mode
			t = time.Now()
			if err := s.Caskg("build", s.Library, "--traces", fbPath, "--quiet", "-o", full); err != nil {
				return nil, fmt.Errorf("harness: learn: build with %d runs: %w", n, err)
			}
			p.BuildSec = time.Since(t).Seconds()
			a, errA := os.ReadFile(next)
			b, errB := os.ReadFile(full)
			if err := errors.Join(errA, errB); err != nil {
				return nil, err
			}
			p.Identical = bytes.Equal(a, b)
			if p.Rebuild, err = comp10(b, s.Tasks); err != nil {
				return nil, err
			}
			cur = next
		}
		data, err := os.ReadFile(cur)
		if err != nil {
			return nil, err
		}
		if p.Update, err = comp10(data, s.Tasks); err != nil {
			return nil, err
		}
		if n == 0 {
			p.Rebuild = p.Update
		}
		lc.Points = append(lc.Points, p)
	}
	return lc, nil
}

// comp10 is COMP@10 of an artifact on tasks, with the engine's defaults.
func comp10(data []byte, tasks []eval.Task) (float64, error) {
	g, err := graphs.Decode(data)
	if err != nil {
		return 0, err
	}
	row, err := scoreRun("learn", engine.New(g), tasks, []int{cutoff}, engine.Request{})
	if err != nil {
		return 0, err
	}
	return row.Summary.Complete[cutoff], nil
}

// feedbackServer is caskg serve's server on a loopback port with a feedback log, as `caskg
// serve ARTIFACT --feedback FILE --feedback-tokens FILE` runs it, but for the rate limit: a
// replay sends faster than the 10 reports a second a deployment takes. Each training run was
// one agent's, so each is sent with a token of its own: the build counts it as one reporter's
// run (builder.MinReporters), as it would count the runs of that many agents.
type feedbackServer struct {
	url  string
	http *http.Server
	srv  *serve.Server
	log  *serve.FeedbackLog
}

func startFeedbackServer(artifact, logPath, dir string, runs int, taskText bool) (*feedbackServer, error) {
	var list strings.Builder
	for k := range max(1, runs) {
		fmt.Fprintf(&list, "run%d %s\n", k, replayToken(k))
	}
	tokens, err := service.ParseTokens("replay", list.String())
	if err != nil {
		return nil, err
	}
	log, err := serve.OpenFeedbackLog(logPath, serve.FeedbackOptions{Rate: 1e9, Burst: 1 << 30, QueryText: taskText})
	if err != nil {
		return nil, err
	}
	// The page and the module are not used: stand-ins, so the server starts without make build.
	stub := filepath.Join(dir, "serve-stub")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"index.html", "caskg.js", "caskg.wasm"} {
		if err := os.WriteFile(filepath.Join(stub, f), []byte("\n"), 0o644); err != nil {
			return nil, err
		}
	}
	srv, err := serve.New(serve.Options{Artifact: artifact, Playground: stub, JS: stub,
		WASM: filepath.Join(stub, "caskg.wasm"), Feedback: log, Reporters: service.FeedbackAuth{Tokens: tokens}})
	if err != nil {
		log.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		log.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &feedbackServer{url: "http://" + ln.Addr().String() + serve.APIPrefix + "feedback", http: hs, srv: srv, log: log}, nil
}

// replayToken is the bearer token of the k-th replayed run's reporter.
func replayToken(k int) string { return fmt.Sprintf("replay-token-%012d", k) }

// report posts run k as feedback, as its own reporter, with its task as the query when taskText
// and the run has one; false when the server refused it (4xx).
func (f *feedbackServer) report(ctx context.Context, run builder.Trace, k int, taskText bool) (bool, error) {
	query := "replayed run " + run.ID
	if taskText && run.Task != "" {
		query = run.Task
	}
	body, _ := json.Marshal(map[string]any{"query": query, "used": run.Skills, "outcome": service.OutcomeSuccess})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+replayToken(k))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("harness: learn: feedback: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return true, nil
	case resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests:
		return false, nil
	}
	return false, fmt.Errorf("harness: learn: feedback: %s", resp.Status)
}

func (f *feedbackServer) close() {
	f.http.Close()
	f.srv.Close()
	f.log.Close()
}

// WriteLearning writes the learning-curve section's body: what was done, the plot (image, a
// path relative to docs/evaluation-results.md) and a table per set. Everything but the seconds, which it
// leaves out, is deterministic.
func WriteLearning(w io.Writer, curves []*LearnCurve, image string) {
	fmt.Fprintf(w, `Generated by `+"`make eval`"+` (`+"`bin/caskg-learn`"+`, native/lab/cmd/caskg-learn). Each set starts from
`+"`caskg build LIBRARY --state`"+` without runs. Its training runs are then sent, in file order, as
feedback to caskg serve's `+"`POST /v1/feedback`"+` (the server of `+"`caskg serve --feedback FILE`"+` on a
loopback port, in process, its rate limit raised for the replay). After %s runs (those a set
has) and after all of them, `+"`caskg update PREVIOUS.skg --traces FILE`"+` makes the next artifact
from the previous one and the feedback log (leaving out the lines it already has), and beside it
`+"`caskg build LIBRARY --traces FILE`"+` rebuilds from scratch with the same log. Each set is replayed
twice: without task text (each report's query "replayed run ID", which the log does not keep: the
builds learn edges from the calls alone) and, under "task text", with each run's own task as the
query, kept in the log as the run's task (`+"`caskg serve --feedback-query-text`"+`). Each replayed run
is a reported run (a reporter token of its own): the memory counts those only where two reporters
agree and never holds one out for calibration, so its weight stays 0 and the two curves match.
COMP@10 on the test tasks:

![learning curve](%s)

`, stepsText(), image)
	for _, c := range curves {
		fmt.Fprintf(w, "**%s** — %d test tasks (%s); runs: %s, %d sent as feedback", c.Label, c.NumTasks, c.Tasks, c.Runs, c.Accepted+c.Refused)
		if c.Refused > 0 {
			fmt.Fprintf(w, ", %d refused by the server (a name not in the library)", c.Refused)
		}
		fmt.Fprint(w, ".\n\n")
		var rows [][]string
		for _, p := range c.Points {
			same := "yes"
			if !p.Identical {
				same = "no"
			}
			mode := p.Mode
			if p.Seen == 0 {
				mode, same = "—", "—"
			}
			rows = append(rows, []string{strconv.Itoa(p.Seen), f3(p.Update), f3(p.Rebuild), same, mode})
		}
		writeTable(w, []string{"runs seen", "caskg update", "full rebuild", "same bytes", "update"}, rows)
		fmt.Fprintln(w)
	}
}

func stepsText() string {
	var s []string
	for _, n := range learnSteps[1:] {
		t := strconv.Itoa(n)
		if n >= 1000 {
			t = t[:len(t)-3] + "," + t[len(t)-3:]
		}
		s = append(s, t)
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
