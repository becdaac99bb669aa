package main

import (
	"bytes"
	"os"
	"testing"
)

// The checked-in wire_gen.go must be what the generator writes from the engine's types today, so
// that a field the engine adds (or a change to the generator) cannot go unnoticed.
func TestUpToDate(t *testing.T) {
	src, err := generate()
	if err != nil {
		t.Fatalf("generating wire_gen.go: %v", err)
	}
	old, err := os.ReadFile("../wire_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, src) {
		t.Fatalf("wasm/internal/wire/wire_gen.go does not match engine.Request and engine.Response; " +
			"regenerate it with\n\tgo generate ./wasm/internal/wire")
	}
}
