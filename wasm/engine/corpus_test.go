package engine

import (
	"bytes"
	"errors"
	"testing"

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
// builds a memory.
func FuzzDecodeMemoryCorpus(f *testing.F) {
	mc := NewMemoryCorpus()
	for i, r := range memoryRuns(60, 10, 5, 1) {
		mc.Add(r, i, nil)
	}
	good := mc.AppendBinary(nil)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeMemoryCorpus(data, 10)
		if err != nil {
			return
		}
		c.c.build(MemoryOptions{}.orDefaults(), nil)
	})
}
