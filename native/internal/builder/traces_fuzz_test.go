package builder

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// traceLineSeeds are trace lines good and bad: a reported run with its source, the gateway's
// own fields (task, calls) beside the ones read, ids of every JSON kind, and broken lines.
var traceLineSeeds = []string{
	`{"id":"r1","skills":["a","b"],"outcome":"success","source":"token:alice"}`,
	`{"id":7,"skills":["a"],"outcome":"failure","source":"loopback"}`,
	`{"id":"gw-1-1","task":"x","skills":["s__t"],"calls":[{"tool":"s__t","ok":false,"ms":9}]}`,
	`{"id":null,"skills":[]}`,
	`{"skills":["a"],"outcome":"partial"}`,
	`{"id":"1"}`,
	`"skills"`,
	"\t{\"id\":\"1\",\"skills\":[\"a\"]}  ",
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
