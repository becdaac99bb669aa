package engine

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMemoReused: a corpus written with the memo of its memory, read back and given more runs
// makes the memory, and the record folds start from, of a corpus of every run read at once,
// while taking most documents' term frequencies from the memo: with terms the new runs bring
// over the privacy rule, texts the cap pushes out, reporters, failed runs, and options other
// than the memo's.
func TestMemoReused(t *testing.T) {
	const skills = 40
	runs := memoryRuns(1500, skills, 100, 7)
	stale := false
	for _, tc := range []struct {
		name      string
		memo, opt MemoryOptions
	}{
		{"defaults", MemoryOptions{}, MemoryOptions{}},
		{"a small cap", MemoryOptions{PerSet: 2}, MemoryOptions{PerSet: 2}},
		{"a high bar", MemoryOptions{MinRuns: 6}, MemoryOptions{MinRuns: 6}},
		{"other options", MemoryOptions{}, MemoryOptions{MinRuns: 5}},
	} {
		for _, cut := range []int{300, 1400, 1499} {
			memo, opt := tc.memo.orDefaults(), tc.opt.orDefaults()
			mc := NewMemoryCorpus()
			for i, r := range runs[:cut] {
				if err := mc.Add(r, i, nil); err != nil {
					t.Fatal(err)
				}
			}
			mc.Prepare(memo, skills, nil)
			read, err := DecodeMemoryCorpus(mc.AppendBinary(nil), skills)
			if err != nil {
				t.Fatalf("%s, cut %d: %v", tc.name, cut, err)
			}
			if read.c.memo == nil {
				t.Fatalf("%s, cut %d: the corpus read back has no memo", tc.name, cut)
			}
			taskOf := func(i int) (string, error) { return runs[i].Task, nil }
			for i, r := range runs[cut:] {
				if err := read.Add(r, cut+i, taskOf); err != nil {
					t.Fatal(err)
				}
			}
			whole := newMemCorpus(runs)
			want, wantSt, wantMB := whole.buildAll(opt, nil, true)
			kept := 0
			for i := range read.c.sets {
				kept += b2i(read.c.sets[i].hasTF)
			}
			if memo == opt {
				was := read.c.memo.keep
				_, _, mb := read.c.buildAll(opt, nil, true) // the tallies the memo is judged by
				for term := range was {
					stale = stale || was[term] != mb.keep[term]
				}
				read = mustDecode(t, mc.AppendBinary(nil), skills) // again, unbuilt
				for i, r := range runs[cut:] {
					if err := read.Add(r, cut+i, taskOf); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, gotSt, gotMB := read.c.buildAll(opt, nil, true)
			if kept == 0 || kept == len(read.c.sets) {
				t.Errorf("%s, cut %d: %d of %d sets keep the memo's frequencies: the test tests nothing", tc.name, cut, kept, len(read.c.sets))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s, cut %d: memory differs (-whole +resumed):\n%s", tc.name, cut, diff)
			}
			if !cmp.Equal(wantSt, gotSt) {
				t.Errorf("%s, cut %d: stats %+v, want %+v", tc.name, cut, gotSt, wantSt)
			}
			if !reflect.DeepEqual(wantMB, gotMB) {
				t.Errorf("%s, cut %d: the record folds start from differs", tc.name, cut)
			}
		}
	}
	if !stale {
		t.Error("no new run moved a term over the privacy rule: the memo was never judged stale")
	}
}

// mustDecode is DecodeMemoryCorpus of data, failing t on an error.
func mustDecode(t *testing.T, data []byte, skills int) *MemoryCorpus {
	t.Helper()
	mc, err := DecodeMemoryCorpus(data, skills)
	if err != nil {
		t.Fatal(err)
	}
	return mc
}
