// Package memlimit sets the Go runtime's soft memory limit for a build, from the size of its
// library. It is the commands' (caskg build and update, caskg-bench), not the builder's: the
// limit is a setting of the whole process.
package memlimit

import (
	"os"
	"runtime/debug"
)

// Memory a build needs: at its peak (the candidates joined, then probed) a build of 100,000
// skills holds about 7 KiB a skill (docs/rationale.md, "Why does a 100,000-skill build take under a
// minute and under 1 GB?").
const (
	memoryPerSkill = 9 << 10   // the soft limit a skill: a third more than the live data
	memoryFloor    = 900 << 20 // the least soft limit
)

// ForSkills sets the Go runtime's soft memory limit for a build of n skills, unless the
// GOMEMLIMIT environment variable sets one, and returns the limit in force. Without a limit
// the collector lets the heap grow to twice the live data, so a build's resident memory would be
// twice what it holds; with one, it collects more often as the heap nears the limit. The limit
// grows with the library, so that a library larger than the one it was measured on still
// builds with room to spare rather than with the collector running without pause.
// It changes a setting of the whole process: commands call it, not the builder.
func ForSkills(n int) int64 {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(memoryFloor, memoryPerSkill*int64(n)))
	}
	return debug.SetMemoryLimit(-1)
}
