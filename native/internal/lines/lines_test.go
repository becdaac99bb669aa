package lines

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEach checks the line reader eval, the oracle and the trace reader share: blank lines
// skipped but counted, white space trimmed, and the line of the first error, fn's or the
// reader's (a line over 16 MiB).
func TestEach(t *testing.T) {
	stop := errors.New("stop")
	long := strings.Repeat("x", 16<<20+1)
	tests := []struct {
		name     string
		in       string
		stopAt   string // fn fails on this line
		want     []string
		wantLine int
		wantErr  error
	}{
		{"lines and blanks", "a\n\n  \t\n b \r\nc", "", []string{"1:a", "4:b", "5:c"}, 0, nil},
		{"empty", "", "", nil, 0, nil},
		{"fn error", "a\n\nb\nc\n", "b", []string{"1:a", "3:b"}, 3, stop},
		{"line too long", "a\n" + long + "\nb\n", "", []string{"1:a"}, 2, bufio.ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			line, err := Each(strings.NewReader(tt.in), func(line int, data []byte) error {
				got = append(got, fmt.Sprintf("%d:%s", line, data))
				if string(data) == tt.stopAt {
					return stop
				}
				return nil
			})
			if line != tt.wantLine || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Each = %d, %v; want %d, %v", line, err, tt.wantLine, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
