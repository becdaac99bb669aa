package main

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ev writes one go test -json line.
func ev(action, pkg, test, output string) string {
	q := func(s string) string { return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(s) }
	return `{"Action":"` + action + `","Package":"` + pkg + `","Test":"` + test + `","Output":"` + q(output) + `"}` + "\n"
}

const p = "github.com/caskg/caskg/native/x"

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		printed string
		skips   []skip
		failed  bool
		report  string
	}{
		{
			name: "pass and skips",
			in: ev("output", p, "TestA", "=== RUN   TestA\n") + ev("output", p, "TestA", "    a_test.go:3: a log line\n") +
				ev("output", p, "TestA", "--- PASS: TestA (0.00s)\n") + ev("pass", p, "TestA", "") +
				ev("output", p, "TestB", "=== RUN   TestB\n") + ev("output", p, "TestB", "    b_test.go:9: needs ../shared/data\n") +
				ev("output", p, "TestB", "        (the 859 skills)\n") + ev("output", p, "TestB", "--- SKIP: TestB (0.00s)\n") + ev("skip", p, "TestB", "") +
				ev("output", p, "TestC", "    c_test.go:1: needs ../../shared/data (the 859 skills)\n") + ev("skip", p, "TestC", "") +
				ev("output", p, "", "PASS\n") + ev("output", p, "", "ok  \t"+p+"\t0.1s\n") + ev("pass", p, "", ""),
			printed: "ok  \t" + p + "\t0.1s\n",
			skips:   []skip{{p, "TestB", "needs ../shared/data (the 859 skills)"}, {p, "TestC", "needs ../../shared/data (the 859 skills)"}},
			report:  "skipped: 2 tests, for 1 reason:\n  2 × needs ../shared/data (the 859 skills)\n      (native/x TestB, native/x TestC)\n",
		},
		{
			name: "a failing test prints its output",
			in: ev("output", p, "TestA", "=== RUN   TestA\n") + ev("output", p, "TestA", "    a_test.go:3: got 1, want 2\n") +
				ev("output", p, "TestA", "--- FAIL: TestA (0.00s)\n") + ev("fail", p, "TestA", "") +
				ev("output", p, "", "FAIL\n") + ev("output", p, "", "FAIL\t"+p+"\t0.1s\n") + ev("fail", p, "", ""),
			printed: "=== RUN   TestA\n    a_test.go:3: got 1, want 2\n--- FAIL: TestA (0.00s)\nFAIL\nFAIL\t" + p + "\t0.1s\n",
			failed:  true,
			report:  "skipped: no test\n",
		},
		{
			name:    "a build failure",
			in:      `{"ImportPath":"` + p + ` [` + p + `.test]","Action":"build-output","Output":"x.go:1: syntax error\n"}` + "\n" + `{"ImportPath":"` + p + `","Action":"build-fail"}` + "\n",
			printed: "x.go:1: syntax error\n",
			failed:  true,
			report:  "skipped: no test\n",
		},
		{
			name:    "a line that is no event",
			in:      "go: cannot find main module\n",
			printed: "go: cannot find main module\n",
			report:  "skipped: no test\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			s, err := summarize(strings.NewReader(tc.in), &w)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.printed, w.String()); diff != "" {
				t.Errorf("printed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skips, s.skips, cmp.AllowUnexported(skip{})); diff != "" {
				t.Errorf("skips (-want +got):\n%s", diff)
			}
			if s.failed != tc.failed {
				t.Errorf("failed = %v, want %v", s.failed, tc.failed)
			}
			if got := s.skipReport(); got != tc.report {
				t.Errorf("report:\n%s\nwant:\n%s", got, tc.report)
			}
		})
	}
}

// FuzzSummarize feeds any bytes as go test's output: no panic, and every skip it reports has a
// reason.
func FuzzSummarize(f *testing.F) {
	f.Add(ev("output", p, "TestB", "    b_test.go:9: needs ../shared/data\n") + ev("skip", p, "TestB", "") + ev("pass", p, "", ""))
	f.Add(ev("output", p, "TestA", "--- FAIL: TestA (0.00s)\n") + ev("fail", p, "TestA", "") + ev("fail", p, "", ""))
	f.Add(ev("output", p, "TestB", "    b_test.go:9: \n") + ev("skip", p, "TestB", "") + ev("pass", p, "", "")) // an empty message
	f.Add(`{"ImportPath":"x","Action":"build-fail"}` + "\n" + "not json\n{\"Action\":")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := summarize(strings.NewReader(in), io.Discard)
		if err != nil {
			return
		}
		for _, k := range s.skips {
			if k.reason == "" {
				t.Errorf("skip %s %s without a reason", k.pkg, k.test)
			}
		}
		_ = s.skipReport()
	})
}
