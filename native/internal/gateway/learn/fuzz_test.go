package learn

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib/table"
)

var traceSeeds = []string{
	`{"id":"1","skills":["a","b"]}`,
	`{"id":1,"skills":[],"outcome":"failure"}`,
	`{"id":"a\"b<c>","task":"x","skills":["t__x"],"outcome":"success","calls":[{"tool":"t__x","ok":true,"ms":3}]}`,
	`{"skills":null}`,
	`{"id":"1","skills":["a"],"outcome":"maybe"}`,
	`[1,2]`,
	`{"id":"1","ski`,
	"\ufeff{}",
}

// FuzzRecoverTraces checks that recovery never panics, keeps a prefix that recovers to the same
// traces with nothing torn, and cuts only a last line.
func FuzzRecoverTraces(f *testing.F) {
	for _, s := range traceSeeds {
		f.Add([]byte(s + "\n" + s))
		f.Add([]byte(s + "\n\n" + traceSeeds[0] + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := recoverTraces(data)
		if r.keep < 0 || r.keep > int64(len(data)) {
			t.Fatalf("keep %d of %d bytes", r.keep, len(data))
		}
		if cut := data[r.keep:]; bytes.Contains(cut, []byte{'\n'}) {
			t.Fatalf("cut %q, more than a last line", cut)
		}
		kept := data[:r.keep]
		if r.newline {
			kept = append(bytes.Clone(kept), '\n')
		}
		again := recoverTraces(kept)
		if again.torn != 0 || again.newline || again.keep != int64(len(kept)) || len(again.traces) != len(r.traces) || len(again.bad) != len(r.bad) {
			t.Fatalf("recovering the repaired file again: %+v, first %+v", again, r)
		}
		for i := range r.traces {
			if r.traces[i].Key() != again.traces[i].Key() {
				t.Fatalf("trace %d: %+v, then %+v", i, r.traces[i], again.traces[i])
			}
		}
	})
}

// FuzzMeta checks that decodeMeta never panics and that what it accepts encodes to what it
// decodes again.
func FuzzMeta(f *testing.F) {
	sum := strings.Repeat("ab", 32)
	f.Add(encodeMeta(meta{Graph: sum, Catalog: sum, Traces: 3, Built: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}))
	f.Add([]byte(`{"version":1,"graph_sha256":"x","catalog_sha256":"","traces":-1,"built":""}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMeta(data)
		if err != nil {
			return
		}
		m2, err := decodeMeta(encodeMeta(m))
		if err != nil || m2 != m {
			t.Fatalf("%+v encodes to what decodes to %+v, %v", m, m2, err)
		}
	})
}

func TestMetaErrors(t *testing.T) {
	sum := strings.Repeat("0f", 32)
	decode := func(in string) error {
		_, err := decodeMeta([]byte(in))
		return err
	}
	table.Errors(t, "decodeMeta", decode, []table.Case[string, string]{
		{"not json", `{`, "learn: graph meta: unexpected end"},
		{"version", `{"version":2}`, "version 2, this caskg reads 1"},
		{"graph hash", `{"version":1,"graph_sha256":"AB","catalog_sha256":"` + sum + `"}`, `field "graph_sha256": "AB" is not a hex SHA-256`},
		{"catalog hash", `{"version":1,"graph_sha256":"` + sum + `","catalog_sha256":"` + strings.ToUpper(sum) + `"}`, `field "catalog_sha256"`},
		{"traces", `{"version":1,"graph_sha256":"` + sum + `","catalog_sha256":"` + sum + `","traces":-2}`, `field "traces": -2 is negative`},
		{"built", `{"version":1,"graph_sha256":"` + sum + `","catalog_sha256":"` + sum + `","built":"yesterday"}`, `field "built"`},
	})
}

// BenchmarkRecord times Record: encoding a trace line, appending it and fsyncing the file.
func BenchmarkRecord(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(context.Background())
	b.ReportAllocs()
	for k := range b.N {
		if err := l.Record(testTrace(k)); err != nil {
			b.Fatal(err)
		}
	}
}
