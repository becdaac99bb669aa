package builder

import (
	"reflect"
	"slices"
	"testing"
)

// TestFeaturesRoundTrip checks that the features an update reads from a build state are the
// ones the build extracted, to the bit, and that the pairs table names every pair the build
// scored.
func TestFeaturesRoundTrip(t *testing.T) {
	skills := loadLib(t, sampleLib)
	runs := tasksAsTraces(t, sampleTasks)
	_, st := fullBuild(t, skills, runs)
	index := make(map[string]int, len(st.Skills))
	for i, s := range st.Skills {
		index[s.Name] = i
	}
	want, wantIDF := extractFeatures(st.Skills, index)
	got, gotIDF, err := decodeFeatures(encodeFeatures(want, wantIDF), len(want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotIDF, wantIDF) {
		t.Fatal("decoded features differ from the extracted ones")
	}
	if _, _, err := decodeFeatures(encodeFeatures(want, wantIDF), len(want)+1); err == nil {
		t.Error("features of another library size decoded")
	}
	pc, err := decodePairs(st.Pairs, len(st.Skills))
	if err != nil {
		t.Fatal(err)
	}
	chosen, answered := 0, 0
	for i := range st.Skills {
		for e := pc.start[i]; e < pc.start[i+1]; e++ {
			if pc.find(i, int(pc.target[e])) != int(e) {
				t.Fatalf("find(%d, %d) does not find its entry %d", i, pc.target[e], e)
			}
			if pc.chosen[e] {
				chosen++
			}
			if pc.answer[e] >= 0 {
				answered++
			}
		}
	}
	if chosen == 0 || answered == 0 || len(pc.channels) == 0 {
		t.Errorf("pairs table: %d chosen, %d answered, channels %v", chosen, answered, pc.channels)
	}
	if _, err := decodePairs(st.Pairs, len(st.Skills)-1); err == nil {
		t.Error("pairs of another library size decoded")
	}
}

// FuzzDecodeCache feeds the tables' decoders corrupted tables: they must return an error or
// tables whose indexes are in range, never panic.
func FuzzDecodeCache(f *testing.F) {
	sample := loadLib(f, sampleLib)
	_, st := fullBuild(f, sample[:12], []Trace{{ID: "r", Skills: []string{sample[0].Name, sample[1].Name}}})
	n := len(st.Skills)
	f.Add(st.Features, st.Pairs)
	f.Add(st.Features[:len(st.Features)/2], st.Pairs[:len(st.Pairs)/2])
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, features, pairs []byte) {
		if fs, _, err := decodeFeatures(features, n); err == nil {
			for _, x := range fs {
				for _, d := range slices.Concat(x.deps, x.mentions) {
					if d < 0 || d >= n {
						t.Fatalf("feature names skill %d of %d", d, n)
					}
				}
			}
		}
		if pc, err := decodePairs(pairs, n); err == nil {
			for i := range n {
				for e := pc.start[i]; e < pc.start[i+1]; e++ {
					if pc.target[e] < 0 || int(pc.target[e]) >= n {
						t.Fatalf("pair names skill %d of %d", pc.target[e], n)
					}
					pc.find(i, int(pc.target[e]))
				}
			}
		}
	})
}
