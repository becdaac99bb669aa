package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
)

// A worker whose asset is a valid artifact, but not the one make worker built the bundle
// for, refuses to serve: the checksum in artifact.mjs names another artifact.
func TestWorkerdOtherArtifact(t *testing.T) {
	lib := t.TempDir()
	for _, name := range []string{"boil-water", "make-tea"} {
		dir := filepath.Join(lib, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + name + "\ndescription: A skill to " + name + " in the kitchen, step by step.\n---\n\nDo it.\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := testlib.Build(t, lib)
	if _, err := graphs.Decode(other); err != nil {
		t.Fatalf("the other artifact does not decode: %v", err)
	}
	base := serveBundle(t, bundleWith(t, other), "config")
	for _, target := range []string{"/v1/health", "/v1/retrieve?q=boil+water", "/mcp"} {
		c := apiCase{method: "GET", target: target, status: 500,
			want: `{"error":"worker: artifact: checksum ` + headerChecksum(other) + `, but this worker was built for ` + headerChecksum(testlib.Sample(t))}
		status, h, body := do(t, base, c)
		checkAnswer(t, c, status, h, body)
	}
}

// The artifact is an asset only the worker reads: no path serves its bytes, the asset's
// own included.
func TestWorkerdAssetHidden(t *testing.T) {
	base := startWorkerd(t, "config")
	data := testlib.Sample(t)
	for _, target := range []string{"/caskg.skg", "/assets/caskg.skg", "/v1/caskg.skg", "/caskg.skg?x=1", "/CASKG.skg", "/./caskg.skg", "/%63askg.skg"} {
		status, _, body := doRaw(t, base, target)
		if status != 404 || bytes.Contains(body, data[:64]) || len(body) > 2000 {
			t.Errorf("GET %s: %d, %d bytes: %.200s", target, status, len(body), body)
		}
	}
}
