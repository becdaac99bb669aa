package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/google/go-cmp/cmp"
)

// TestMemoryCorpusResumes: a corpus written after some runs, read back and given the rest makes
// the memory and the bytes of a corpus of every run read at once, with texts repeated across the
// cut (read back through taskOf) and across reporters, tool sets and failed runs.
func TestMemoryCorpusResumes(t *testing.T) {
	runs := memoryRuns(900, 40, 20, 3)
	for k := range 30 { // texts asked again after the cut
		runs[500+k*10].Task = runs[k*7].Task
	}
	whole := NewMemoryCorpus()
	for i, r := range runs {
		if err := whole.Add(r, i, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, cut := range []int{0, 1, 450, 899} {
		mc := NewMemoryCorpus()
		for i, r := range runs[:cut] {
			if err := mc.Add(r, i, nil); err != nil {
				t.Fatal(err)
			}
		}
		read, err := DecodeMemoryCorpus(mc.AppendBinary(nil), 40)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		asked := 0
		taskOf := func(i int) (string, error) {
			asked++
			if i >= cut {
				return "", errors.New("asked for a run after the cut: its text is at hand")
			}
			return runs[i].Task, nil
		}
		for i, r := range runs[cut:] {
			if err := read.Add(r, cut+i, taskOf); err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
		}
		if cut == 450 && asked == 0 {
			t.Error("no text repeated across the cut was checked against its run")
		}
		opt := MemoryOptions{}.orDefaults()
		want, wantSt := whole.c.build(opt, nil)
		got, gotSt := read.c.build(opt, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cut %d: memory differs (-whole +resumed):\n%s", cut, diff)
		}
		if !cmp.Equal(wantSt, gotSt) {
			t.Errorf("cut %d: stats %+v, want %+v", cut, gotSt, wantSt)
		}
		if !bytes.Equal(read.AppendBinary(nil), whole.AppendBinary(nil)) {
			t.Errorf("cut %d: the resumed corpus writes other bytes than the whole one", cut)
		}
	}
	if err := whole.Add(runs[0], 3, nil); err == nil {
		t.Error("a run numbered before the last one was taken")
	}
}

// FuzzDecodeMemoryCorpus: corrupt corpus bytes give an error, never a panic, and what decodes
// builds a memory, and is written again (copying what it read) as bytes that decode to the
// same memory and are written again as they are.
func FuzzDecodeMemoryCorpus(f *testing.F) {
	mc := NewMemoryCorpus()
	for i, r := range memoryRuns(60, 10, 5, 1) {
		mc.Add(r, i, nil)
	}
	good := mc.AppendBinary(nil)
	f.Add(good)
	f.Add(good[:len(good)/2])
	mc.Prepare(MemoryOptions{}, 10, nil) // with the memo of its memory
	f.Add(mc.AppendBinary(nil))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeMemoryCorpus(data, 10)
		if err != nil {
			return
		}
		m, st := c.c.build(MemoryOptions{}.orDefaults(), nil)
		once := c.AppendBinary(nil)
		again, err := DecodeMemoryCorpus(once, 10)
		if err != nil {
			t.Fatalf("corpus %x is written again as %x, which does not decode: %v", data, once, err)
		}
		m2, st2 := again.c.build(MemoryOptions{}.orDefaults(), nil)
		if diff := cmp.Diff(m, m2); diff != "" || !cmp.Equal(st, st2) {
			t.Errorf("corpus written again makes another memory (-read +again):\n%s", diff)
		}
		if twice := again.AppendBinary(nil); !bytes.Equal(once, twice) {
			t.Errorf("corpus %x is written as %x, then as %x", data, once, twice)
		}
	})
}

// TestPreparedFitMemory: FitMemory of a corpus prepared beforehand gives the memory and stats of
// one made in place, and a prepared memory of other options, or of a corpus changed since, is
// not used.
func TestPreparedFitMemory(t *testing.T) {
	const skills = 60
	runs := memoryRuns(1200, skills, 30, 5)
	art := flowArtifact(skills)
	g, err := decodeArtifact(art)
	if err != nil {
		t.Fatal(err)
	}
	taskOf := func(i int) (string, error) { return runs[i].Task, nil }
	corpus := func(n int) *MemoryCorpus {
		mc := NewMemoryCorpus()
		for i, r := range runs[:n] {
			if err := mc.Add(r, i, nil); err != nil {
				t.Fatal(err)
			}
		}
		return mc
	}
	fit := func(mc *MemoryCorpus, opt MemoryOptions) (*graphs.Memory, MemoryStats) {
		m, st, err := FitMemory(art, g, mc, taskOf, opt)
		if err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	for _, tc := range []struct {
		name            string
		prepare, fitted MemoryOptions
		addAfter        bool // a run added between Prepare and FitMemory
	}{
		{"same options", MemoryOptions{}, MemoryOptions{}, false},
		{"other options", MemoryOptions{MinRuns: 40}, MemoryOptions{}, false},
		{"changed corpus", MemoryOptions{}, MemoryOptions{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(runs) - 1
			if !tc.addAfter {
				n++
			}
			mc := corpus(n)
			mc.Prepare(tc.prepare, skills, taskOf)
			if tc.addAfter {
				if err := mc.Add(runs[n], n, nil); err != nil {
					t.Fatal(err)
				}
			}
			got, gotSt := fit(mc, tc.fitted)
			want, wantSt := fit(corpus(len(runs)), tc.fitted)
			if want == nil || want.Weight == 0 && len(want.Docs) == 0 {
				t.Fatal("the runs make no memory: the test tests nothing")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("memory differs (-in place +prepared):\n%s", diff)
			}
			if !cmp.Equal(wantSt, gotSt) {
				t.Errorf("stats %+v, want %+v", gotSt, wantSt)
			}
		})
	}
}

// appendSetKey writes setKey's bytes: the corpus orders and finds its sets by them.
func TestAppendSetKey(t *testing.T) {
	for _, tc := range []struct {
		ids    []int
		failed bool
	}{{nil, false}, {nil, true}, {[]int{0}, false}, {[]int{3, 12, 100000}, true}, {[]int{9, 10, 99}, false}} {
		if got, want := string(appendSetKey([]byte("x"), tc.ids, tc.failed)), "x"+setKey(tc.ids, tc.failed); got != want {
			t.Errorf("appendSetKey(%v, %v) = %q, want %q", tc.ids, tc.failed, got, want)
		}
	}
}
