package builder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
)

// buildOf is Build of skills with opt, whose traces are the runs.
func buildOf(ctx context.Context, skills []ingest.Skill, opt Options) ([]byte, *Report, error) {
	r, err := Build(ctx, Input{Skills: skills, Options: &opt, Runs: opt.traces})
	if err != nil {
		return nil, nil, err
	}
	return r.Artifact, r.Report, nil
}

// updateOf is Build of in (with Previous) and opt, making the build state.
func updateOf(ctx context.Context, in Input, opt Options) ([]byte, *State, *Report, error) {
	in.Options, in.State = &opt, true
	r, err := Build(ctx, in)
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Artifact, r.State, r.Report, nil
}

// fullBuild is a full build of skills with runs and the builtin model learnt from skills.
func fullBuild(t testing.TB, skills []ingest.Skill, traces []Trace) ([]byte, *State) {
	t.Helper()
	res, err := Build(context.Background(), Input{Skills: skills, Runs: traces, State: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Artifact, res.State
}

// tasksAsTraces turns the gold sets of a task file into runs.
func tasksAsTraces(t testing.TB, path string) []Trace {
	t.Helper()
	tasks, err := eval.ReadTasks(path, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []Trace
	for _, tk := range tasks {
		out = append(out, Trace{ID: tk.ID, Skills: tk.Gold})
	}
	return out
}

// TestUpdateMatchesBuild checks that an update gives, byte for byte, the artifact a full build
// gives from the same library and runs: new runs on an unchanged library (the incremental
// path), runs on a build that had none, a replayed log whose old lines are left out, and a
// library with skills added, changed and removed (the full path).
func TestUpdateMatchesBuild(t *testing.T) {
	nestful := filepath.Join(sharedData, "eval/nestful")
	if _, err := os.Stat(nestful); err != nil {
		t.Skip("needs ../shared/data")
	}
	sample := loadLib(t, sampleLib)
	sampleRuns := tasksAsTraces(t, sampleTasks)
	nest := loadLib(t, filepath.Join(nestful, "tools.json"))
	nestRuns, err := ReadTraces(filepath.Join(nestful, "traces_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// A library with one skill removed, one changed and one added.
	changed := slices.Clone(nest[1:])
	changed[0].Description += " It also reports the rate limit."
	added := changed[1]
	added.Name += "_v2"
	changed = append(changed, added)

	// One skill changed, added or removed at a time, the rest as it was. Most pairs are as they
	// were, but not all: a changed text moves every IDF, and with it the lexical values the
	// state holds (State.Features, State.Pairs), and the builtin model learnt from the library.
	// The update must not reuse them.
	oneChanged := slices.Clone(nest)
	oneChanged[len(nest)/2].Description += " Returns the list sorted by distance."
	oneAdded := append(slices.Clone(nest), nest[len(nest)/3])
	oneAdded[len(nest)].Name += "_copy"
	oneRemoved := slices.Delete(slices.Clone(nest), len(nest)/4, len(nest)/4+1)
	// A body that now names another skill: only that pair's mention, I/O and probes move.
	mention := slices.Clone(nest)
	mention[7].Body += "\nUse " + nest[40].Name + " first."

	half := len(nestRuns) / 2
	// Failed runs among the new ones: the second half again, every third run failed.
	withFailures := slices.Clone(nestRuns[half:])
	for k := range withFailures {
		withFailures[k].ID += "-again"
		withFailures[k].Failed = k%3 == 0
	}
	// Reported runs (Trace.Source): the second half by three reporters in turn, every fifth
	// one failed; and one reporter's runs, then a second reporter's same runs, which admits
	// the pairs the first alone could not make count (MinReporters).
	reported := slices.Clone(nestRuns[half:])
	for k := range reported {
		reported[k].Source = fmt.Sprint("token:r", k%3)
		reported[k].Failed = k%5 == 0
	}
	byOne := slices.Clone(nestRuns[half : half+60])
	byAnother := slices.Clone(byOne)
	for k := range byOne {
		byOne[k].Source = "token:one"
		byAnother[k].Source = "loopback"
	}
	tests := []struct {
		name          string
		lib           []ingest.Skill
		old, new      []Trace
		now           []ingest.Skill // the library at the update; nil: the old one
		wantMode      string
		wantDuplicate int
	}{
		{"sample: new runs", sample, sampleRuns[:10], sampleRuns[10:], nil, "incremental", 0},
		{"nestful: half the runs, then the rest", nest, nestRuns[:half], nestRuns[half:], nil, "incremental", 0},
		{"nestful: no runs, then all", nest, nil, nestRuns, nil, "incremental", 0},
		{"nestful: 1% more runs", nest, nestRuns[:len(nestRuns)-2], nestRuns[len(nestRuns)-2:], nil, "incremental", 0},
		{"nestful: the whole log replayed", nest, nestRuns[:half], nestRuns, nil, "incremental", half},
		{"nestful: failed runs", nest, nestRuns[:half], withFailures, nil, "incremental", 0},
		{"nestful: reported runs", nest, nestRuns[:half], reported, nil, "incremental", 0},
		{"nestful: one reporter, then another", nest, append(slices.Clone(nestRuns[:half]), byOne...), byAnother, nil, "incremental", 0},
		{"nestful: reported runs, library changed", nest, reported, byAnother, oneChanged, "full", 0},
		{"nestful: skills changed", nest, nestRuns[:half], nestRuns[half:], changed, "full", 0},
		{"nestful: one skill changed", nest, nestRuns[:half], nestRuns[half:], oneChanged, "full", 0},
		{"nestful: one skill added", nest, nestRuns[:half], nestRuns[half:], oneAdded, "full", 0},
		{"nestful: one skill removed", nest, nestRuns[:half], nestRuns[half:], oneRemoved, "full", 0},
		{"nestful: one body names another skill", nest, nestRuns[:half], nestRuns[half:], mention, "full", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, st := fullBuild(t, tc.lib, tc.old)
			now := tc.now
			if now == nil {
				now = tc.lib
			}
			all := append(slices.Clone(tc.old), tc.new[tc.wantDuplicate:]...)
			want, wantState := fullBuild(t, now, all)
			if strings.Contains(tc.name, "reporter") && bytes.Equal(want, old) {
				t.Fatal("the reported runs changed nothing: the case tests nothing")
			}

			// Through the file format, as caskg update reads it.
			st = reread(t, st)
			opt := st.Options()
			if tc.now != nil {
				if opt.Embedder, err = BuiltinEmbedder(tc.now); err != nil {
					t.Fatal(err)
				}
			}
			got, gotState, rep, err := updateOf(context.Background(), Input{Old: old, Previous: st, Skills: tc.now, Runs: tc.new}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Update.Mode != tc.wantMode || rep.Update.Duplicates != tc.wantDuplicate {
				t.Errorf("update %+v, want mode %s, %d duplicates", rep.Update, tc.wantMode, tc.wantDuplicate)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("update gave %x (%d bytes), the full build %x (%d bytes)", sha256.Sum256(got), len(got), sha256.Sum256(want), len(want))
			}
			if tc.wantMode == "incremental" && rep.ProbesCached == 0 {
				t.Errorf("incremental update reused no probe answer: %+v", rep)
			}
			// The update's state is the full build's: a second update starts from either.
			if d := stateDiff(gotState, wantState); d != "" {
				t.Errorf("the update's build state differs from the full build's: %s", d)
			}
			// And so are its bytes, though an update writes the library's as it read them.
			if !sameStateFile(t, gotState, wantState) {
				t.Errorf("the update's build state file differs from the full build's")
			}
		})
	}
}

// stateDiff names the first field in which two states differ, "" when none does.
func stateDiff(a, b *State) string {
	switch {
	case !bytes.Equal(a.log.all(), b.log.all()) || !bytes.Equal(a.log.index, b.log.index):
		return "runs"
	case !bytes.Equal(a.tally, b.tally):
		return "the runs' tally"
	case !bytes.Equal(a.corpus, b.corpus):
		return "the memory corpus"
	}
	vx, vy := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := range vx.NumField() {
		if !vx.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(vx.Field(i).Interface(), vy.Field(i).Interface()) {
			return vx.Type().Field(i).Name
		}
	}
	return ""
}

// TestUpdateRefuses checks that a state is not used with another artifact, and that a state
// file of another kind is refused by name.
func TestUpdateRefuses(t *testing.T) {
	sample := loadLib(t, sampleLib)
	runs := tasksAsTraces(t, sampleTasks)
	_, st := fullBuild(t, sample, runs[:5])
	other, _ := fullBuild(t, sample, runs[:6])
	_, _, _, err := updateOf(context.Background(), Input{Old: other, Previous: st, Runs: runs[6:]}, st.Options())
	if err == nil || !strings.Contains(err.Error(), "belongs to another artifact") {
		t.Errorf("state of another artifact: err %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("not a state"), []byte(stateMagic + "garbage")} {
		if _, err := DecodeState(bad); err == nil || !strings.HasPrefix(err.Error(), "builder: ") {
			t.Errorf("DecodeState(%q): err %v", bad, err)
		}
	}
	// A damaged file: any byte changed, or the end cut off, is refused as corrupt.
	good, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(stateMagic) + 2, len(good) / 3, len(good) / 2, len(good) - 10} {
		bad := slices.Clone(good)
		bad[at] ^= 0x40
		if _, err := DecodeState(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("state with byte %d of %d changed: err %v", at, len(good), err)
		}
	}
	if _, err := DecodeState(good[:len(good)-100]); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("state cut short: err %v", err)
	}
	// A state of version 1, which had no checksum: refused by its version.
	var v1 bytes.Buffer
	v1.WriteString(stateMagic)
	if err := gob.NewEncoder(&v1).Encode(struct {
		Version int
		Code    string
		Chosen  [][]int32
	}{1, "go:old", [][]int32{{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeState(v1.Bytes()); err == nil || !strings.Contains(err.Error(), "build state version 1,") {
		t.Errorf("state of version 1: err %v", err)
	}
	// A state of version 2 could not keep a run's reporter: refused by its version.
	v2 := *st
	v2.Version = 2
	if enc, err := EncodeState(&v2); err != nil {
		t.Fatal(err)
	} else if _, err := DecodeState(enc); err == nil || !strings.Contains(err.Error(), "build state version 2, this caskg reads 4") {
		t.Errorf("state of version 2: err %v", err)
	}
	// A state of version 3, four parts with the runs in gob: refused by its version, with what
	// to do.
	var head bytes.Buffer
	if err := gob.NewEncoder(&head).Encode(struct {
		Version int
		Traces  []Trace
	}{3, runs[:5]}); err != nil {
		t.Fatal(err)
	}
	v3 := []byte(stateMagic)
	for _, part := range [][]byte{head.Bytes(), nil, nil, nil} {
		v3 = binary.LittleEndian.AppendUint32(v3, uint32(len(part)))
		v3 = append(v3, part...)
	}
	v3 = binary.LittleEndian.AppendUint32(v3, crc32.Checksum(v3, castagnoli))
	if _, err := DecodeState(v3); err == nil || !strings.Contains(err.Error(), "build state version 3, this caskg reads 4: rebuild with caskg build --state") {
		t.Errorf("state of version 3: err %v", err)
	}
	// Other options: a full build, said why.
	opt := st.Options()
	opt.Cap = 8
	if r := st.Reusable(sample, opt); !strings.Contains(r, "options") {
		t.Errorf("Reusable with another cap: %q", r)
	}
}

// synthRuns is synth.Runs as traces.
func synthRuns(t testing.TB, skills []ingest.Skill, base, n, first int) []Trace {
	t.Helper()
	runs, err := synth.Runs(skills, base, n, first)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Trace, len(runs))
	for i, r := range runs {
		out[i] = Trace{ID: r.ID, Skills: r.Skills}
	}
	return out
}

// BenchmarkUpdate10k compares, on a 10,000-skill library grown by synth from
// ../shared/data/skills with 2,000 runs, a full build with 1% more runs (learning the builtin
// model included, as caskg build does) with an update of the old build by those runs (reading
// the build state included, as caskg update does). go test ./native/internal/builder -run '^$' -bench Update10k -benchtime 1x runs it.
func BenchmarkUpdate10k(b *testing.B) {
	dir := filepath.Join(sharedData, "skills")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("shared data not present:", err)
	}
	base := loadLib(b, dir)
	skills, err := synth.Grow(base, 10000)
	if err != nil {
		b.Fatal(err)
	}
	old := synthRuns(b, skills, len(base), 2000, 0)
	delta := synthRuns(b, skills, len(base), 20, len(old))
	oldData, st := fullBuild(b, skills, old)
	stateBytes, err := EncodeState(st)
	if err != nil {
		b.Fatal(err)
	}
	var want []byte
	b.Run("full build", func(b *testing.B) {
		for b.Loop() {
			res, err := Build(context.Background(), Input{Skills: skills, Runs: append(slices.Clone(old), delta...)})
			if err != nil {
				b.Fatal(err)
			}
			want = res.Artifact
		}
	})
	b.Run("update", func(b *testing.B) {
		for b.Loop() {
			st, err := DecodeState(stateBytes)
			if err != nil {
				b.Fatal(err)
			}
			got, _, rep, err := updateOf(context.Background(), Input{Old: oldData, Previous: st, Runs: delta}, st.Options())
			if err != nil {
				b.Fatal(err)
			}
			if rep.Update.Mode != "incremental" {
				b.Fatalf("update: %+v", rep.Update)
			}
			if want != nil && !bytes.Equal(got, want) {
				b.Fatal("the update differs from the full build")
			}
			b.ReportMetric(float64(len(stateBytes))/1e6, "state-MB")
		}
	})
}

// FuzzDecodeState feeds DecodeState corrupted build states: it must return an error or a
// state, never panic; a state it returns encodes again.
func FuzzDecodeState(f *testing.F) {
	sample := loadLib(f, sampleLib)
	_, st := fullBuild(f, sample[:12], []Trace{{ID: "r", Skills: []string{sample[0].Name, sample[1].Name}}})
	good, err := EncodeState(st)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(stateMagic))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeState(data)
		if err != nil {
			return
		}
		if _, err := EncodeState(st); err != nil {
			t.Errorf("decoded state does not encode: %v", err)
		}
	})
}

// TestCodeIDIsBuildID checks that the running test binary is identified by its Go build ID,
// read from the ELF note, as `go tool buildid` reports it.
func TestCodeIDIsBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	if _, err := elf.Open(exe); err != nil {
		t.Skipf("not an ELF executable: %v", err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	want := "go:" + strings.TrimSpace(string(out))
	if got := codeID(); got != want {
		t.Errorf("codeID() = %q, want %q", got, want)
	}
}

// TestUpdateDamagedRun checks that a run of the state that does not decode fails the update,
// naming the state, rather than being left out of the statistics.
func TestUpdateDamagedRun(t *testing.T) {
	sample := loadLib(t, sampleLib)
	runs := tasksAsTraces(t, sampleTasks)[:6]
	runs[2].Failed = true // a failed run: every update reads it again
	old, st := fullBuild(t, sample, runs)
	enc, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if st, err = DecodeState(enc); err != nil {
		t.Fatal(err)
	}
	rec := slices.Clone(st.log.records)
	off := binary.LittleEndian.Uint32(st.log.index[2*runIndexEntry:])
	rec[off] = 0xff // the id's length, now a varint that runs on
	st.log.records = rec
	_, _, _, err = updateOf(context.Background(), Input{Old: old, Previous: st, Runs: tasksAsTraces(t, sampleTasks)[6:9]}, st.Options())
	if err == nil || !strings.Contains(err.Error(), "build state: run 2") {
		t.Errorf("update with a damaged run: err %v", err)
	}
}

// FuzzDecodeTally: the runs' tally of a state never panics on corrupt bytes, and what decodes
// encodes again to the same bytes.
func FuzzDecodeTally(f *testing.F) {
	tl := newRunTally(4)
	index := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	for i, tr := range []Trace{{Skills: []string{"a", "b", "c"}}, {Skills: []string{"c", "a"}}, {Skills: []string{"d"}, Failed: true},
		{Skills: []string{"b", "d"}, Source: "token:x"}, {Skills: []string{"zz", "d", "a"}}} {
		tl.add(&tr, i, index)
	}
	good := encodeTally(tl, 4)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := decodeTally(data, 4, 5)
		if err != nil {
			return
		}
		once := encodeTally(tl, 4)
		tl2, err := decodeTally(once, 4, 5)
		if err != nil {
			t.Fatalf("tally %x encodes as %x, which does not decode: %v", data, once, err)
		}
		if twice := encodeTally(tl2, 4); !bytes.Equal(once, twice) {
			t.Errorf("tally %x encodes as %x, then as %x", data, once, twice)
		}
	})
}

// FuzzRunLog: a state's runs never panic on corrupt records or index, and what decodes is
// written again as it was.
func FuzzRunLog(f *testing.F) {
	var l runLog
	if err := l.append([]Trace{{ID: "1", Skills: []string{"a", "b"}, Task: "parse the log"}, {ID: "2", Failed: true, Source: "token:x"}}); err != nil {
		f.Fatal(err)
	}
	f.Add(l.records, l.index)
	f.Add(l.records[:5], l.index)
	f.Add([]byte{}, l.index[:runIndexEntry])
	f.Fuzz(func(t *testing.T, records, index []byte) {
		l := runLog{records: records, index: index}
		if l.check() != nil {
			return
		}
		runs, err := l.runs()
		if err != nil {
			return
		}
		var again runLog
		if err := again.append(runs); err != nil {
			t.Fatal(err)
		}
		back, err := again.runs()
		if err != nil {
			t.Fatalf("runs written again do not decode: %v", err)
		}
		if !cmp.Equal(back, runs, cmpopts.EquateEmpty()) {
			t.Errorf("runs %+v written and read again as %+v", runs, back)
		}
	})
}

// sameStateFile reports whether a and b encode to the same build state file; it fails t when
// either does not encode.
func sameStateFile(t testing.TB, a, b *State) bool {
	t.Helper()
	ea, errA := EncodeState(a)
	eb, errB := EncodeState(b)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ea, eb)
}

// reread is st written to its file and read back, as caskg update reads it.
func reread(t testing.TB, st *State) *State {
	t.Helper()
	enc, err := EncodeState(st)
	if err == nil {
		st, err = DecodeState(enc)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}
