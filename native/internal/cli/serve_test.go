package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/wasm/modbuild"
	"github.com/caskg/caskg/wasm/service"
	"github.com/google/go-cmp/cmp"
)

func TestServeBadInput(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../../..")
	checkFails(t, []failCase{
		{"two artifacts", []string{"serve", art, art}, 2, "want at most one ARTIFACT, got 2"},
		{"missing artifact", []string{"serve", "--root", root, filepath.Join(t.TempDir(), "none.skg")}, 1, "caskg serve: artifact: open"},
		{"not an artifact", []string{"serve", "--root", root, sampleTasks}, 1, "not a caskg artifact"},
		{"no module", []string{"serve", "--root", root, "--wasm", filepath.Join(t.TempDir(), "caskg.wasm"), art}, 1, "run 'make wasm'"},
		{"bad tasks", []string{"serve", "--root", root, "--tasks", art, "--wasm", art, art}, 1, "serve: tasks:"},
		{"bad address", []string{"serve", "--root", root, "--wasm", art, "--addr", "127.0.0.1:-1", art}, 1, "127.0.0.1:-1"},
		// Each package's prefix once: not "caskg serve: serve: tasks: eval: open …".
		{"missing tasks", []string{"serve", "--root", root, "--tasks", filepath.Join(root, "none.jsonl"), art}, 1,
			"caskg serve: tasks: open " + filepath.Join(root, "none.jsonl") + ": no such file or directory\n"},
	})
}

// startServe runs caskg serve with args (after "serve") in the test's process until the test
// calls stop, as Ctrl-C would; it returns the server's base URL once it listens.
func startServe(t *testing.T, args ...string) (base string, stop func() result) {
	t.Helper()
	return startListening(t, "serve", args...)
}

// startListening is startServe for any command that listens through serveContext and
// serveReady (serve, mcp --http).
func startListening(t *testing.T, command string, args ...string) (base string, stop func() result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addrs := make(chan string, 1)
	oldCtx, oldReady := serveContext, serveReady
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	serveReady = func(addr string) { addrs <- addr }
	t.Cleanup(func() { serveContext, serveReady = oldCtx, oldReady })

	done := make(chan result, 1)
	go func() { done <- run(t, append([]string{command}, args...)...) }()
	select {
	case addr := <-addrs:
		base = "http://" + addr
	case r := <-done:
		t.Fatalf("%s ended at once: exit %d, %s", command, r.code, r.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30 s", command)
	}
	return base, func() result {
		cancel()
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not stop within 10 s of the interrupt", command)
			return result{}
		}
	}
}

// TestServe starts caskg serve on a free port of 127.0.0.1, asks it for the page, the module and
// an answer, and stops it as Ctrl-C would.
func TestServe(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../../..")
	// The module is only sent, never run, here: any file stands in for it.
	base, stop := startServe(t, art, "--root", root, "--wasm", art, "--addr", "127.0.0.1:0")
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct{ path, want string }{
		{"/", "<title>caskg playground"},
		{"/caskg.js", "export class Caskg"},
		{"/v1/retrieve?q=heat+some+egg&k=2", `{"results":[{"name":"heat-object-in-microwave"`},
		{"/tasks.json", "[]"}, // no tasks without the default artifact: an empty list
	} {
		resp, err := client.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: status %d, body %.120q; want %q", c.path, resp.StatusCode, b, c.want)
		}
	}
	if r := stop(); r.code != 0 || r.stdout != "playground: "+base+"/\n" || !strings.Contains(r.stderr, "caskg serve: stopped") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestCORSOriginsFlag reads --cors-origins and its default, which depends on the address.
func TestCORSOriginsFlag(t *testing.T) {
	tests := []struct {
		flag, addr string
		want       []string // nil: any origin
		err        string
	}{
		{"", "127.0.0.1:8080", nil, ""},
		{"", "[::1]:0", nil, ""},
		{"", "localhost:8080", nil, ""},
		{"", "0.0.0.0:8080", []string{}, ""},
		{"", ":8080", []string{}, ""},
		{"*", "0.0.0.0:8080", nil, ""},
		{"none", "127.0.0.1:8080", []string{}, ""},
		{"https://a.example, http://localhost:3000", "127.0.0.1:8080", []string{"https://a.example", "http://localhost:3000"}, ""},
		{"https://a.example,*", "0.0.0.0:8080", nil, ""},
		{"a.example", "127.0.0.1:8080", nil, `"a.example" is not an origin`},
		{"https://a.example/", "127.0.0.1:8080", nil, "is not an origin"},
		{"https://a.example/x", "127.0.0.1:8080", nil, "is not an origin"},
		{"ftp://a.example", "127.0.0.1:8080", nil, "is not an origin"},
	}
	for _, tt := range tests {
		got, err := corsOrigins(tt.flag, tt.addr)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.flag, err, tt.err)
			}
			continue
		}
		if err != nil || (got == nil) != (tt.want == nil) || strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("corsOrigins(%q, %q) = %#v, %v; want %#v", tt.flag, tt.addr, got, err, tt.want)
		}
	}
}

// TestServeBinary builds caskg as make build does — the module built and embedded, here through
// an -overlay onto native/serve/assets rather than copies in the tree — runs it from an empty
// folder with nothing but the artifact, and fetches the page, the module and a CORS preflight.
func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module and caskg")
	}
	root, _ := filepath.Abs("../../..")
	work := t.TempDir()
	module := filepath.Join(work, "caskg.wasm")
	if err := modbuild.Build(module); err != nil {
		t.Fatal(err)
	}
	assets := filepath.Join(root, "native", "serve", "assets")
	overlay := map[string]string{filepath.Join(assets, "caskg.wasm"): module}
	for dir, globs := range map[string][]string{"playground": {"playground/*.html", "playground/*.js", "playground/*.css"}, "js": {"wasm/js/caskg.js", "wasm/js/caskg.d.ts"}} {
		for _, g := range globs {
			m, _ := filepath.Glob(filepath.Join(root, g))
			for _, f := range m {
				overlay[filepath.Join(assets, dir, filepath.Base(f))] = f
			}
		}
	}
	ov, _ := json.Marshal(map[string]any{"Replace": overlay})
	ovFile := filepath.Join(work, "overlay.json")
	os.WriteFile(ovFile, ov, 0o644)
	exe := filepath.Join(work, "caskg")
	build := exec.Command("go", "build", "-trimpath", "-overlay", ovFile, "-o", exe, "github.com/caskg/caskg/native/cmd/caskg")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// An empty folder with the binary and the artifact, far from the repository.
	dir := t.TempDir()
	b, _ := os.ReadFile(exe)
	os.WriteFile(filepath.Join(dir, "caskg"), b, 0o755)
	art, _ := os.ReadFile(buildSample(t))
	os.WriteFile(filepath.Join(dir, "lib.skg"), art, 0o644)
	page, _ := os.ReadFile(filepath.Join(root, "playground", "index.html"))
	wasm, _ := os.ReadFile(module)

	client := &http.Client{Timeout: 10 * time.Second}
	fetch := func(method, url string, header ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	for _, tt := range []struct {
		name  string
		args  []string
		allow map[string]string // Origin → Access-Control-Allow-Origin of the preflight
	}{
		{"default", nil, map[string]string{"https://a.example": "*"}},
		{"--cors-origins", []string{"--cors-origins", "https://a.example"}, map[string]string{"https://a.example": "https://a.example", "https://b.example": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "caskg"), append([]string{"serve", "lib.skg", "--addr", "127.0.0.1:0"}, tt.args...)...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Signal(os.Interrupt)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					if err != nil || !strings.Contains(stderr.String(), "caskg serve: stopped") {
						t.Errorf("after the interrupt: %v; stderr:\n%s", err, &stderr)
					}
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Error("serve did not stop within 10 s of the interrupt")
				}
			}()
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var base string
			select {
			case l := <-lines:
				base = strings.TrimSuffix(strings.TrimPrefix(l, "playground: "), "/")
				if !strings.HasPrefix(base, "http://127.0.0.1:") {
					t.Fatalf("stdout %q; stderr:\n%s", l, &stderr)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("serve did not listen within 30 s; stderr:\n%s", &stderr)
			}
			for _, c := range []struct {
				path, ctype string
				want        []byte
			}{{"/", "text/html; charset=utf-8", page}, {"/caskg.wasm", "application/wasm", wasm}} {
				resp, body := fetch("GET", base+c.path)
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype || !bytes.Equal(body, c.want) {
					t.Errorf("GET %s: %d %q, %d bytes; want 200 %q, %d bytes", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), c.ctype, len(c.want))
				}
			}
			for origin, want := range tt.allow {
				resp, _ := fetch("OPTIONS", base+"/v1/retrieve", "Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
				if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != want ||
					!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
					t.Errorf("preflight from %s: %d, Allow-Origin %q, Allow-Methods %q; want 204, %q, POST", origin, resp.StatusCode,
						resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Methods"), want)
				}
			}
		})
	}
}

// TestServeFeedback runs caskg serve --feedback FILE, posts two reports and a bad one, and reads
// the file back as traces, as caskg build --traces does.
func TestServeFeedback(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../../..")
	log := filepath.Join(t.TempDir(), "feedback.jsonl")
	base, stop := startServe(t, art, "--root", root, "--wasm", art, "--addr", "127.0.0.1:0", "--feedback", log)
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"query": "heat some egg", "used": ["pick-up-object", "heat-object-in-microwave"], "outcome": "success"}`, 200},
		{`{"query": "heat some egg", "used": ["fly-to-the-moon"]}`, 400},
		{`{"query": "find the lamp", "used": ["find-lamp"], "outcome": "failure"}`, 200},
	} {
		resp, err := client.Post(base+"/v1/feedback", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("POST %s: status %d, want %d", c.body, resp.StatusCode, c.status)
		}
	}
	if r := stop(); r.code != 0 || !strings.Contains(r.stderr, "appends trace lines to "+log) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}

	traces, err := builder.ReadTraces(log)
	if err != nil {
		t.Fatal(err)
	}
	var got, failed [][]string
	for _, tr := range traces {
		if !strings.HasPrefix(tr.ID, "fb-") {
			t.Errorf("trace id %q, want fb-…", tr.ID)
		}
		if tr.Failed {
			failed = append(failed, tr.Skills)
		} else {
			got = append(got, tr.Skills)
		}
	}
	// The failed run is read as a failed run, not as a successful one.
	if want := [][]string{{"pick-up-object", "heat-object-in-microwave"}}; !cmp.Equal(got, want) {
		t.Errorf("traces %v, want %v", got, want)
	}
	if want := [][]string{{"find-lamp"}}; !cmp.Equal(failed, want) {
		t.Errorf("failed runs %v, want %v", failed, want)
	}
	// The task text stays out without --feedback-query-text.
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "egg") || !strings.Contains(string(b), `"outcome":"failure"`) {
		t.Errorf("feedback file:\n%s", b)
	}
}

func TestFeedbackFlags(t *testing.T) {
	art := buildSample(t)
	for _, args := range [][]string{
		{"serve", art, "--feedback-query-text"},
		{"mcp", art, "--feedback-query-text"},
	} {
		if r := run(t, args...); r.code != 2 || !strings.Contains(r.stderr, "--feedback-query-text needs --feedback FILE") {
			t.Errorf("caskg %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	dir := t.TempDir() // a folder is no log file
	if r := run(t, "mcp", art, "--feedback", dir); r.code != 1 || !strings.Contains(r.stderr, "feedback log") {
		t.Errorf("mcp --feedback DIR: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeFeedbackTokens runs caskg serve --feedback with --feedback-tokens: a report with a
// reporter's token is recorded as from token:NAME, one without a token or with a wrong one is a
// 401 with WWW-Authenticate and recorded nowhere. Without tokens, a loopback server records
// reports as from "loopback", and serve refuses to take feedback on any other address.
func TestServeFeedbackTokens(t *testing.T) {
	art := buildSample(t)
	root, _ := filepath.Abs("../../..")
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.txt")
	if err := os.WriteFile(tokens, []byte("# reporters\nalice alice-0123456789abcdef\nbob bob-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(service.TokensEnv, "")
	os.Unsetenv(service.TokensEnv)
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(base, auth string) *http.Response {
		req, _ := http.NewRequest("POST", base+"/v1/feedback", strings.NewReader(`{"query": "egg", "used": ["pick-up-object", "heat-object-in-microwave"]}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	sources := func(log string) []string {
		traces, err := builder.ReadTraces(log)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tr := range traces {
			out = append(out, tr.Source)
		}
		return out
	}

	log := filepath.Join(dir, "tokens.jsonl")
	base, stop := startServe(t, art, "--root", root, "--wasm", art, "--addr", "127.0.0.1:0", "--feedback", log, "--feedback-tokens", tokens)
	for _, c := range []struct {
		auth      string
		status    int
		challenge string
	}{
		{"Bearer alice-0123456789abcdef", 200, ""},
		{"", 401, `Bearer realm="caskg feedback"`},
		{"Bearer bob-0123456789abcdeX", 401, `Bearer realm="caskg feedback", error="invalid_token"`},
		{"Bearer bob-0123456789abcdef", 200, ""},
	} {
		if resp := post(base, c.auth); resp.StatusCode != c.status || resp.Header.Get("WWW-Authenticate") != c.challenge {
			t.Errorf("POST with %q: %d, WWW-Authenticate %q; want %d, %q", c.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), c.status, c.challenge)
		}
	}
	if r := stop(); r.code != 0 || !strings.Contains(r.stderr, "2 reporters' bearer tokens") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got, want := sources(log), []string{"token:alice", "token:bob"}; !cmp.Equal(got, want) {
		t.Errorf("sources %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "0123456789abcdef") {
		t.Errorf("the log holds a token:\n%s", b)
	}

	// Loopback without tokens: anyone, as one reporter.
	open := filepath.Join(dir, "open.jsonl")
	base, stop = startServe(t, art, "--root", root, "--wasm", art, "--addr", "127.0.0.1:0", "--feedback", open)
	if resp := post(base, ""); resp.StatusCode != 200 {
		t.Errorf("POST on loopback without tokens: %d", resp.StatusCode)
	}
	stop()
	if got, want := sources(open), []string{"loopback"}; !cmp.Equal(got, want) {
		t.Errorf("sources %v, want %v", got, want)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("alice alice-0123456789abcdef\nbob short\n"), 0o600)
	serveArgs := func(args ...string) []string {
		return append([]string{"serve", art, "--root", root, "--wasm", art}, args...)
	}
	checkFails(t, []failCase{
		{"wildcard address", serveArgs("--addr", "0.0.0.0:0", "--feedback", filepath.Join(dir, "x.jsonl")), 1, "--feedback on 0.0.0.0:0, an address beyond loopback, needs reporters' tokens"},
		{"every interface", serveArgs("--addr", ":0", "--feedback", filepath.Join(dir, "x.jsonl")), 1, "an address beyond loopback"},
		{"short token", serveArgs("--feedback", filepath.Join(dir, "x.jsonl"), "--feedback-tokens", bad), 1, "service: tokens " + bad + `:2: token of "bob": 5 characters, at least 16`},
		{"tokens without feedback", serveArgs("--feedback-tokens", tokens), 2, "--feedback-tokens needs --feedback FILE"},
	})
	if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); err == nil {
		t.Errorf("a refused serve created its feedback log")
	}
}
