package testlib

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
)

func TestUnder(t *testing.T) {
	pkgs := []string{"net", "net/http", "network", "os/exec", "github.com/caskg/caskg/native/internal/builder", "strings"}
	tests := []struct {
		name     string
		prefixes []string
		want     []string
	}{
		{"a package and those under it", []string{"net"}, []string{"net", "net/http"}},
		{"under a module path", []string{"github.com/caskg/caskg/native"}, []string{"github.com/caskg/caskg/native/internal/builder"}},
		{"each package once", []string{"os/exec", "os"}, []string{"os/exec"}},
		{"none", []string{"plugin"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Under(pkgs, tt.prefixes...)); diff != "" {
				t.Errorf("Under(%q) (-want +got):\n%s", tt.prefixes, diff)
			}
		})
	}
}

// The sample decodes, and each bad artifact fails to with its error, good left as it was.
func TestBadArtifacts(t *testing.T) {
	good := Sample(t)
	if _, err := graphs.Decode(good); err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(good)
	for _, tt := range BadArtifacts(good) {
		if _, err := graphs.Decode(tt.Data); !errors.Is(err, tt.Err) {
			t.Errorf("%s: Decode error = %v, want %v", tt.Name, err, tt.Err)
		}
	}
	if !bytes.Equal(good, before) {
		t.Error("BadArtifacts changed the artifact it was given")
	}
}

func TestSampleFile(t *testing.T) {
	b, err := os.ReadFile(SampleFile(t))
	if err != nil || !bytes.Equal(b, Sample(t)) {
		t.Errorf("SampleFile holds %d bytes (%v), not the sample's %d", len(b), err, len(Sample(t)))
	}
}

func TestSampleMemory(t *testing.T) {
	data := SampleMemory(t) // fails on a silent memory
	g := Decode(t, data)
	resp, err := engine.New(g).Query(engine.Request{Query: MemoryQuery})
	if err != nil {
		t.Fatal(err)
	}
	raised := map[string]bool{}
	for _, r := range resp.Results {
		if r.Recalled != nil {
			raised[r.Name] = true
		}
	}
	for _, s := range MemorySkills {
		if !raised[s] {
			t.Errorf("%q: %s not raised by the memory; results %+v", MemoryQuery, s, resp.Results)
		}
	}
}
