package modbuild

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestModuleSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module")
	}
	out := filepath.Join(t.TempDir(), "caskg.wasm")
	if err := Build(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	gz := Gzip(raw)
	t.Logf("module: %d bytes raw, %d gzip", len(raw), gz)
	if gz > MaxGzip {
		t.Errorf("module is %d bytes gzipped, over the %d-byte bar (raw %d)", gz, MaxGzip, len(raw))
	}
	if !bytes.HasPrefix(raw, []byte("\x00asm")) {
		t.Errorf("module does not start with the WebAssembly magic")
	}
}
