package learn_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/caskg/caskg/native/internal/gateway/learn"
)

// BenchmarkUpdateSwap times, on ToolLinkOS served as one server "t", the first full build of
// the catalog (SetCatalog until the graph is swapped in), and the update that 50 new traces
// start once a graph has learned 0, 50, 200 or 500, and the update that 200 or 500 new traces
// start on the first graph (from the first Record of the batch until the new graph and engine
// are swapped in; the batch's fsynced appends are included).
func BenchmarkUpdateSwap(b *testing.B) {
	catalog, traces := toolLinkOS(b)
	b.Run("full", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			dir := filepath.Join(b.TempDir(), "state")
			l, err := learn.Open(dir, learn.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := l.SetCatalog(catalog); err != nil {
				b.Fatal(err)
			}
			waitLoop(b, l)
			b.StopTimer()
			l.Close(context.Background())
			b.StartTimer()
		}
	})
	for _, c := range []struct{ learned, batch int }{{0, 50}, {50, 50}, {200, 50}, {500, 50}, {0, 200}, {0, 500}} {
		learned, batch := c.learned, c.batch
		b.Run(fmt.Sprintf("learned=%d/new=%d", learned, batch), func(b *testing.B) {
			base := filepath.Join(b.TempDir(), "base")
			l, err := learn.Open(base, learn.Options{LearnEvery: max(learned, 1)})
			if err != nil {
				b.Fatal(err)
			}
			l.SetCatalog(catalog)
			waitLoop(b, l)
			for _, tr := range traces[:learned] {
				if err := l.Record(tr); err != nil {
					b.Fatal(err)
				}
			}
			waitLoop(b, l)
			if st := l.Status(); st.TracesLearned != learned {
				b.Fatalf("the base graph learned %d traces, want %d", st.TracesLearned, learned)
			}
			l.Close(context.Background())
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "state")
				copyDir(b, base, dir)
				l, err := learn.Open(dir, learn.Options{LearnEvery: batch})
				if err != nil {
					b.Fatal(err)
				}
				l.SetCatalog(catalog) // the graph's own: nothing to build
				b.StartTimer()
				for _, tr := range traces[learned : learned+batch] {
					if err := l.Record(tr); err != nil {
						b.Fatal(err)
					}
				}
				waitLoop(b, l)
				b.StopTimer()
				if st := l.Status(); st.TracesLearned != learned+batch {
					b.Fatalf("learned %d traces, want %d", st.TracesLearned, learned+batch)
				}
				l.Close(context.Background())
				b.StartTimer()
			}
		})
	}
}

func copyDir(b *testing.B, from, to string) {
	b.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
