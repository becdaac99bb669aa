package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// An event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output, build-fail
	Test        string
	Output      string
	FailedBuild string
}

// A skip is one skipped test and the reason it gave.
type skip struct{ pkg, test, reason string }

// summary is what summarize saw.
type summary struct {
	skips   []skip
	failed  bool
	results int // packages that reported ok, FAIL or no test files
}

// summarize copies to w what a plain go test would print of the events on r, and returns the
// skips and whether anything failed. A line that is not an event is printed as it is (go test
// writes some errors unwrapped).
func summarize(r io.Reader, w io.Writer) (*summary, error) {
	s := &summary{}
	buf := map[string][]string{} // package + "\x00" + test → output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			io.WriteString(w, e.Output)
		case "build-fail":
			s.failed = true
		case "output":
			buf[key] = append(buf[key], e.Output)
		case "skip", "pass":
			switch {
			case e.Test == "":
				s.results++ // a package passed, has no test files or skipped them all
				for _, o := range buf[key] {
					if isResultLine(o) {
						io.WriteString(w, o)
					}
				}
			case e.Action == "skip":
				s.skips = append(s.skips, skip{e.Package, e.Test, skipReason(buf[key])})
			}
			delete(buf, key)
		case "fail":
			s.failed = true
			if e.Test != "" {
				io.WriteString(w, strings.Join(buf[key], ""))
				delete(buf, key)
				continue
			}
			s.results++
			// A package that fails outside its tests (a panic, a timeout, TestMain): the output
			// of every test it did not finish, then its own.
			prefix := e.Package + "\x00"
			for _, k := range slices.Sorted(mapKeys(buf)) {
				if strings.HasPrefix(k, prefix) && k != key {
					io.WriteString(w, strings.Join(buf[k], ""))
					delete(buf, k)
				}
			}
			io.WriteString(w, strings.Join(buf[key], ""))
			delete(buf, key)
		}
	}
	return s, sc.Err()
}

func mapKeys(m map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// isResultLine reports whether a package's output line is its result, which go test prints
// without -v: "ok  \tpkg\t1.2s", "?   \tpkg\t[no test files]".
func isResultLine(s string) bool {
	return strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "?   \t")
}

// skipLog matches the line t.Skip writes: "    file_test.go:12: reason".
var skipLog = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: (.*)$`)

// skipReason is the message a skipped test gave: its last log line before "--- SKIP", with
// the lines that continue it.
func skipReason(out []string) string {
	var reason []string
	for _, line := range out {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "--- SKIP"):
		case skipLog.MatchString(line):
			reason = []string{skipLog.FindStringSubmatch(line)[1]}
		case len(reason) > 0 && strings.HasPrefix(line, "        "):
			reason = append(reason, strings.TrimSpace(line))
		}
	}
	if r := strings.TrimSpace(strings.Join(reason, " ")); r != "" {
		return r
	}
	return "(no reason given)" // none, or a log line with an empty message
}

// upDirs is a run of "../", as each package's tests reach ../shared from their own folder.
var upDirs = regexp.MustCompile(`(\.\./)+`)

// skipReport is the count of skips and, for each reason (most frequent first), how many tests
// gave it and which.
func (s *summary) skipReport() string {
	if len(s.skips) == 0 {
		return "skipped: no test\n"
	}
	byReason := map[string][]string{}
	for _, k := range s.skips {
		name := strings.TrimPrefix(k.pkg, "github.com/caskg/caskg/") + " " + k.test
		// Packages name ../shared from their own depth: one reason for all of them.
		reason := upDirs.ReplaceAllString(k.reason, "../")
		byReason[reason] = append(byReason[reason], name)
	}
	reasons := slices.Sorted(func(yield func(string) bool) {
		for r := range byReason {
			if !yield(r) {
				return
			}
		}
	})
	slices.SortStableFunc(reasons, func(a, b string) int { return len(byReason[b]) - len(byReason[a]) })
	var b strings.Builder
	fmt.Fprintf(&b, "skipped: %d %s, for %d %s:\n", len(s.skips), plural(len(s.skips), "test", "tests"), len(reasons), plural(len(reasons), "reason", "reasons"))
	for _, r := range reasons {
		tests := byReason[r]
		list := tests
		more := ""
		if len(list) > 3 {
			list, more = list[:3], fmt.Sprintf(" and %d more", len(tests)-3)
		}
		fmt.Fprintf(&b, "  %d × %s\n      (%s%s)\n", len(tests), r, strings.Join(list, ", "), more)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
