package syncio

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites writes lines from several goroutines while another reads: no line is
// torn or lost (go test -race checks the reads of the Buffer).
func TestConcurrentWrites(t *testing.T) {
	const writers, lines = 8, 200
	var plain bytes.Buffer
	buf := NewBuffer()
	for _, tt := range []struct {
		name string
		w    io.Writer
		read func() string
	}{
		{"Writer", NewWriter(&plain), func() string { return "" }},
		{"Buffer", buf, buf.String},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					line := []byte(strings.Repeat(string(rune('a'+i)), 40) + "\n")
					for range lines {
						if _, err := tt.w.Write(line); err != nil {
							t.Error(err)
							return
						}
						tt.read()
					}
				}()
			}
			wg.Wait()
			got := plain.String()
			if tt.name == "Buffer" {
				got = buf.String()
			}
			all := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(all) != writers*lines {
				t.Fatalf("%d lines, want %d", len(all), writers*lines)
			}
			for n, l := range all {
				if len(l) != 40 || strings.Trim(l, l[:1]) != "" {
					t.Fatalf("line %d torn: %q", n+1, l)
				}
			}
		})
	}
}
