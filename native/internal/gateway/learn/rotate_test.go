package learn

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// lines is the encoded lines of the traces from..to-1 of testTrace.
func lines(t *testing.T, from, to int) []byte {
	t.Helper()
	var b []byte
	for k := from; k < to; k++ {
		ln, err := encodeLine(testTrace(k))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, ln...)
	}
	return b
}

// recordedIDs is the IDs of the traces the loop holds, in order.
func recordedIDs(l *Loop) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for _, t := range l.traces {
		ids = append(ids, t.ID)
	}
	return ids
}

func testIDs(from, to int) []string {
	var ids []string
	for k := from; k < to; k++ {
		ids = append(ids, testTrace(k).ID)
	}
	return ids
}

// TestReadsRotatedFiles: Open reads the rotated trace files by number, then traces.jsonl, and
// no other file of the directory.
func TestReadsRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		rotatedName(10):    lines(t, 3, 5), // numbers, not names, order the files
		rotatedName(9):     lines(t, 0, 3),
		TracesFile:         lines(t, 5, 6),
		UndoneFile:         lines(t, 100, 101),
		"traces.x1.jsonl":  lines(t, 200, 201),
		"traces.jsonl.bak": lines(t, 300, 301),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := open(t, dir, Options{})
	if got, want := recordedIDs(l), testIDs(0, 6); !slices.Equal(got, want) {
		t.Errorf("traces %q, want %q", got, want)
	}
	if l.rotated != 10 {
		t.Errorf("last rotated %d, want 10", l.rotated)
	}
}

func TestRotatedNumber(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{
		{"traces.000001.jsonl", 1}, {"traces.1.jsonl", 1}, {"traces.1234567.jsonl", 1234567},
		{"traces.jsonl", 0}, {"traces.undone.jsonl", 0}, {"traces.open.jsonl", 0}, {"traces.000000.jsonl", 0},
		{"traces.-1.jsonl", 0}, {"traces.1.jsonl.tmp", 0}, {"traces..jsonl", 0}, {"traces.9999999999.jsonl", 0},
	}
	for _, tt := range tests {
		if n, ok := rotatedNumber(tt.name); n != tt.want || ok != (tt.want > 0) {
			t.Errorf("rotatedNumber(%q) = %d, %v; want %d", tt.name, n, ok, tt.want)
		}
	}
}

// TestRotation: traces.jsonl is rotated once it reaches RotateBytes; the files together hold
// every trace in order; a restart reads them all and goes on with an update (the graph's
// learned traces are still the first ones), and rollback and relearn work across the files.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	one := int64(len(lines(t, 0, 1)))
	opt := Options{LearnEvery: 4, RotateBytes: 2 * one}
	l, lg := openBuilt(t, dir, opt)
	record(t, l, 0, 9)
	l.LearnNow()
	wait(t, l)
	paths, last, err := traceFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if last < 3 {
		t.Fatalf("%d rotations after 9 traces of about %d bytes at %d, want 4:\n%s", last, one, opt.RotateBytes, lg)
	}
	var all []byte
	for _, p := range paths {
		data := fixture.ReadFile(t, p)
		if size := int64(len(data)); p != filepath.Join(dir, TracesFile) && (size < opt.RotateBytes || size >= opt.RotateBytes+2*one) {
			t.Errorf("%s: %d bytes, want from %d to %d", p, size, opt.RotateBytes, opt.RotateBytes+2*one)
		}
		all = append(all, data...)
	}
	if !bytes.Equal(all, lines(t, 0, 9)) {
		t.Errorf("the trace files together:\n%s\nwant\n%s", all, lines(t, 0, 9))
	}
	if st := l.Status(); st.TracesLearned != 9 {
		t.Fatalf("learned %d, want 9", st.TracesLearned)
	}
	closeLoop(t, l)

	l2, lg := openBuilt(t, dir, opt)
	if got, want := recordedIDs(l2), testIDs(0, 9); !slices.Equal(got, want) {
		t.Fatalf("after reopening: traces %q, want %q", got, want)
	}
	record(t, l2, 9, 12)
	l2.LearnNow()
	wait(t, l2)
	if st := l2.Status(); st.TracesLearned != 12 || lg.Has("full build") {
		t.Fatalf("after reopening: learned %d, want 12 by an update:\n%s", st.TracesLearned, lg)
	}
	closeLoop(t, l2)

	// The last update learned traces 9 to 11, which sit in a rotated file and traces.jsonl:
	// rollback undoes those 3, relearn learns them again.
	for _, step := range []struct {
		name string
		do   func(dir string) (int, error)
		want []string
	}{
		{"rollback", Rollback, testIDs(0, 9)},
		{"relearn", Relearn, testIDs(0, 12)},
	} {
		if n, err := step.do(dir); err != nil || n != 3 {
			t.Fatalf("%s: %d traces, %v; want 3 (traces 9 to 11)", step.name, n, err)
		}
		l, _ := open(t, dir, opt)
		if got := recordedIDs(l); !slices.Equal(got, step.want) {
			t.Errorf("after %s: traces %q, want %q", step.name, got, step.want)
		}
		closeLoop(t, l)
	}
}

// FuzzRotatedNumber: any name is either not a rotated file's or the name of its number's
// rotated file, up to zero padding.
func FuzzRotatedNumber(f *testing.F) {
	for _, s := range []string{"traces.000001.jsonl", "traces.jsonl", "traces.undone.jsonl", "traces.0.jsonl", "traces.+1.jsonl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := rotatedNumber(name)
		if !ok {
			return
		}
		if m, ok2 := rotatedNumber(rotatedName(n)); n <= 0 || !ok2 || m != n {
			t.Errorf("%q: %d, whose name %q reads %d, %v", name, n, rotatedName(n), m, ok2)
		}
	})
}
