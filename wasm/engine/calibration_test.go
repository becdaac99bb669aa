package engine

import (
	"slices"
	"testing"
)

// TestCalibrationRuns holds calibration to the runs the memory admits: trusted successful runs
// with a task, and a reporter's newest task for a tool set only where two reporters gave it.
func TestCalibrationRuns(t *testing.T) {
	tests := []struct {
		name string
		in   []PastRun
		want []int
	}{
		{"trusted", []PastRun{{Task: "a b", Skills: []int{1}}, {Task: "", Skills: []int{1}}, {Task: "c", Skills: []int{2}, Failed: true}}, []int{0}},
		{"one reporter, many reports", []PastRun{
			{Task: "read a file", Skills: []int{3}, Reporter: "token:m"},
			{Task: "read a file", Skills: []int{3}, Reporter: "token:m"},
			{Task: "read a file", Skills: []int{3}, Reporter: "token:m"}}, nil},
		{"two reporters agree", []PastRun{
			{Task: "old", Skills: []int{3, 1}, Reporter: "token:a"},
			{Task: "x", Skills: []int{1, 3}, Reporter: "token:b"},
			{Task: "new", Skills: []int{1, 3}, Reporter: "token:a"},
			{Task: "y", Skills: []int{4}, Reporter: "token:b"}}, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := calibrationRuns(tt.in, 2); !slices.Equal(got, tt.want) {
				t.Errorf("calibrationRuns = %v, want %v", got, tt.want)
			}
		})
	}
}
