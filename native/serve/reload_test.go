package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/caskg/caskg/wasm/testlib"
)

// smallLibrary returns the artifact of the sample's first n skills: another artifact, with other
// answers and another checksum.
func smallLibrary(tb testing.TB, n int) []byte {
	tb.Helper()
	dir := tb.TempDir()
	ents, err := os.ReadDir("../../graphs/sample")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents[:n] {
		b, err := os.ReadFile(filepath.Join("../../graphs/sample", e.Name(), "SKILL.md"))
		if err != nil {
			tb.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, e.Name()), 0o755)
		if err := os.WriteFile(filepath.Join(dir, e.Name(), "SKILL.md"), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return testlib.Build(tb, dir)
}

// replace writes data over path as caskg build does: a new file renamed over the old one.
func replace(tb testing.TB, path string, data []byte, mod time.Time) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

// logs collects what the server logs.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

type health struct {
	Artifact struct {
		Checksum string `json:"checksum"`
		Skills   int    `json:"skills"`
		Path     string `json:"path"`
		Modified string `json:"modified"`
	} `json:"artifact"`
}

func get(tb testing.TB, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		tb.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		tb.Errorf("GET %s: status %d: %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestReload rewrites the artifact, atomically, back and forth while clients query it: every
// answer is wholly the old artifact's or wholly the new one's, the server takes each new file up
// within a bounded time, and health names the live file.
func TestReload(t *testing.T) {
	old := reloadEvery
	reloadEvery = 20 * time.Millisecond
	t.Cleanup(func() { reloadEvery = old })

	a, b := testlib.Sample(t), smallLibrary(t, 30)
	opts := testFiles(t)
	opts.Tasks = ""
	opts.Reload = true
	var log logs
	opts.Logf = log.logf
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })

	// What each artifact answers, from servers that never reload.
	const query = "/v1/retrieve?q=heat+some+egg+and+put+it+in+the+garbage+can&k=8"
	want := map[string]string{}
	checksums := map[string]string{}
	for name, data := range map[string][]byte{"old": a, "new": b} {
		o := testFiles(t)
		o.Tasks = ""
		o.Artifact = filepath.Join(t.TempDir(), "x.skg")
		os.WriteFile(o.Artifact, data, 0o644)
		ref, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		w := do(ref, "GET", query, "")
		want[w.Body.String()] = name
		var h health
		json.Unmarshal(do(ref, "GET", "/v1/health", "").Body.Bytes(), &h)
		checksums[h.Artifact.Checksum] = name
		ref.Close()
	}
	if len(want) != 2 || len(checksums) != 2 {
		t.Fatal("the two artifacts answer alike; the test could not tell them apart")
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	seen := make(chan string, 1<<16)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				body := get(t, ts.URL+query)
				name, ok := want[body]
				if !ok {
					t.Errorf("an answer of neither artifact: %.300s", body)
					return
				}
				seen <- name
			}
		})
	}
	// Bounded: 6 rewrites, each taken up within 5 s.
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 6 {
		data, name := b, "new"
		if i%2 == 1 {
			data, name = a, "old"
		}
		mod := base.Add(time.Duration(i+1) * time.Second)
		replace(t, opts.Artifact, data, mod)
		deadline := time.Now().Add(5 * time.Second)
		for {
			var h health
			if err := json.Unmarshal([]byte(get(t, ts.URL+"/v1/health")), &h); err != nil {
				t.Fatal(err)
			}
			if checksums[h.Artifact.Checksum] == name {
				abs, _ := filepath.Abs(opts.Artifact)
				if h.Artifact.Path != abs || h.Artifact.Modified != mod.UTC().Format(time.RFC3339Nano) {
					t.Errorf("health names %q modified %s, want %q modified %s", h.Artifact.Path, h.Artifact.Modified, abs, mod.UTC().Format(time.RFC3339Nano))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("rewrite %d: the %s artifact is not live after 5 s; log:\n%s", i, name, &log)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	close(seen)
	count := map[string]int{}
	for name := range seen {
		count[name]++
	}
	if count["old"] == 0 || count["new"] == 0 {
		t.Errorf("answers seen: %v; want both artifacts'", count)
	}
	if got := strings.Count(log.String(), "reloaded "); got != 6 {
		t.Errorf("%d reloads logged, want 6:\n%s", got, &log)
	}
	if s.Engine().Graph().NumSkills() != 96 {
		t.Errorf("Engine has %d skills, want the live artifact's 96", s.Engine().Graph().NumSkills())
	}
}

// TestReloadBad replaces the artifact with files that must not go live: the old artifact keeps
// answering, the log says why once per file, and a good file afterwards goes live.
func TestReloadBad(t *testing.T) {
	old := reloadEvery
	reloadEvery = 0
	t.Cleanup(func() { reloadEvery = old })

	opts := testFiles(t) // with the sample tasks: an artifact without their gold skills is refused
	opts.Reload = true
	var log logs
	opts.Logf = log.logf
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := do(s, "GET", "/v1/health", "").Body.String()
	settle := func() {
		do(s, "GET", "/v1/health", "")
		s.wg.Wait() // the reload the request started
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, bad := range []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte("not an artifact"), "not a caskg artifact"},
		{"cut", testlib.Sample(t)[:1000], "keeping the live artifact"},
		{"tasks' gold missing", smallLibrary(t, 10), "is not in the artifact"},
	} {
		replace(t, opts.Artifact, bad.data, base.Add(time.Duration(i)*time.Second))
		settle()
		settle() // the same file again: refused without another decode or log line
		if got := do(s, "GET", "/v1/health", "").Body.String(); got != before {
			t.Errorf("%s: health changed to %s", bad.name, got)
		}
		if n := strings.Count(log.String(), "keeping the live artifact"); n != i+1 || !strings.Contains(log.String(), bad.want) {
			t.Errorf("%s: log has %d refusals, want %d, and %q:\n%s", bad.name, n, i+1, bad.want, &log)
		}
	}
	os.Remove(opts.Artifact)
	settle()
	settle()
	if n := strings.Count(log.String(), "no such file"); n != 1 {
		t.Errorf("a missing file is logged %d times, want once:\n%s", n, &log)
	}
	replace(t, opts.Artifact, testlib.Sample(t), base.Add(time.Minute))
	settle()
	if got := do(s, "GET", "/v1/health", "").Body.String(); got == before || !strings.Contains(got, `"skills":96`) {
		t.Errorf("health after a good file: %s", got)
	}
}

// TestNoReload: without Options.Reload the artifact stays as it was read, and health is the
// worker's, naming no file.
func TestNoReload(t *testing.T) {
	old := reloadEvery
	reloadEvery = 0
	t.Cleanup(func() { reloadEvery = old })
	opts := testFiles(t)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := do(s, "GET", "/v1/health", "").Body.String()
	replace(t, opts.Artifact, smallLibrary(t, 96), time.Now().Add(time.Hour))
	do(s, "GET", "/v1/health", "")
	s.wg.Wait()
	if got := do(s, "GET", "/v1/health", "").Body.String(); got != before || strings.Contains(got, `"path"`) {
		t.Errorf("health %s, want %s", got, before)
	}
}

// TestEmbedded serves the copies embedded in the binary when no folder is given, and a binary
// built without them refuses to start with the way to build them.
func TestEmbedded(t *testing.T) {
	old := embedded
	t.Cleanup(func() { embedded = old })
	files := fstest.MapFS{
		"assets/README.md":             {Data: []byte("placeholder")},
		"assets/playground/index.html": {Data: []byte("<title>caskg playground</title>")},
		"assets/playground/app.js":     {Data: []byte("export {}")},
		"assets/js/caskg.js":           {Data: []byte("export class Caskg {}")},
		"assets/caskg.wasm":            {Data: []byte("\x00asm\x01\x00\x00\x00")},
	}
	embedded = files
	opts := Options{Artifact: testlib.SampleFile(t), Version: "test"}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, ctype, want string }{
		{"/", "text/html; charset=utf-8", "<title>caskg playground</title>"},
		{"/app.js", "text/javascript; charset=utf-8", "export {}"},
		{"/caskg.js", "text/javascript; charset=utf-8", "export class Caskg {}"},
		{"/caskg.wasm", "application/wasm", "\x00asm\x01\x00\x00\x00"},
	} {
		w := do(s, "GET", c.target, "")
		if w.Code != 200 || w.Header().Get("Content-Type") != c.ctype || w.Body.String() != c.want {
			t.Errorf("%s: %d %q %q; want 200 %q %q", c.target, w.Code, w.Header().Get("Content-Type"), w.Body, c.ctype, c.want)
		}
	}
	if w := do(s, "GET", "/README.md", ""); w.Code != 404 {
		t.Errorf("/README.md: status %d, want 404", w.Code)
	}
	s.Close()

	for _, missing := range []string{"assets/caskg.wasm", "assets/playground/index.html", "assets/js/caskg.js"} {
		m := fstest.MapFS{}
		for k, v := range files {
			if k != missing {
				m[k] = v
			}
		}
		embedded = m
		s, err := New(opts)
		if err == nil {
			s.Close()
			t.Fatalf("without %s: no error", missing)
		}
		if !strings.Contains(err.Error(), missing+") is not embedded") || !strings.Contains(err.Error(), "run 'make build'") {
			t.Errorf("without %s: %v", missing, err)
		}
	}
	// A folder given for a part replaces the embedded copy, which need not be there.
	embedded = fstest.MapFS{"assets/README.md": {Data: []byte("placeholder")}}
	o := testFiles(t)
	if s, err := New(o); err != nil {
		t.Errorf("live files with nothing embedded: %v", err)
	} else {
		s.Close()
	}
}
