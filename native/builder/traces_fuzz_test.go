package builder

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// traceLineSeeds are trace lines good and bad, the gateway's own among them (task, calls).
var traceLineSeeds = []string{
	`{"id":"1","skills":["a","b"]}`,
	`{"id":1,"skills":[],"outcome":"failure"}`,
	`{"id":"a\"b<c>","task":"x","skills":["t__x"],"outcome":"success","calls":[{"tool":"t__x","ok":true,"ms":3}]}`,
	`{"skills":null}`,
	`{"id":"1","skills":["a"],"outcome":"maybe"}`,
	`[1,2]`,
	`{"id":"1","ski`,
	"\ufeff{}",
}

// FuzzParseTrace holds ParseTrace to ReadTraces: for any one line, both accept it or
// both refuse it, and they read the same trace.
func FuzzParseTrace(f *testing.F) {
	for _, s := range traceLineSeeds {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") {
			return // one line
		}
		seg := bytes.TrimSpace([]byte(line))
		if len(seg) == 0 {
			return // a blank line is no trace to either
		}
		path := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want, rerr := ReadTraces(path)
		got, perr := ParseTrace(seg)
		if (rerr == nil) != (perr == nil) {
			t.Fatalf("line %q: ReadTraces %v, ParseTrace %v", line, rerr, perr)
		}
		if rerr == nil && !reflect.DeepEqual(want, []Trace{got}) {
			t.Fatalf("line %q: ReadTraces %+v, ParseTrace %+v", line, want, got)
		}
	})
}
