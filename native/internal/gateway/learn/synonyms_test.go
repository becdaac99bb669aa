package learn

import (
	"path/filepath"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestSynonyms: every graph a loop with synonyms builds, full or incremental, applies them; a
// loop opened again without them rebuilds its graph without, though no trace is new.
func TestSynonyms(t *testing.T) {
	dir := t.TempDir()
	syn, err := builder.ReadSynonyms(fixture.WriteFile(t, dir, "syn.txt", "calendar, agenda\n"))
	if err != nil {
		t.Fatal(err)
	}
	state := func() *builder.State {
		t.Helper()
		st, err := builder.DecodeState(fixture.ReadFile(t, filepath.Join(dir, GraphFile+builder.StateSuffix)))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	l, lg := openBuilt(t, dir, Options{LearnEvery: 3, Synonyms: syn})
	record(t, l, 0, 3)
	wait(t, l)
	if lg.Has("synonyms") {
		t.Errorf("a loop with the same synonyms found them changed:\n%s", lg)
	}
	if st := state(); st.NumRuns() != 3 || !st.Options().Synonyms.Equal(syn) {
		t.Errorf("graph of %d runs, not with the loop's synonyms", st.NumRuns())
	}
	closeLoop(t, l)

	l, lg = openBuilt(t, dir, Options{LearnEvery: 3})
	if !lg.Has("the synonyms changed") {
		t.Errorf("reopened without synonyms, no rebuild:\n%s", lg)
	}
	if st := state(); st.NumRuns() != 3 || !st.Options().Synonyms.Equal(nil) {
		t.Errorf("graph of %d runs, with synonyms; want 3 runs and none", st.NumRuns())
	}
	closeLoop(t, l)
}
