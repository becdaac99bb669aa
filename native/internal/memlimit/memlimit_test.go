package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestForSkills: the soft limit grows with the library past its floor, and GOMEMLIMIT wins.
func TestForSkills(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOMEMLIMIT", "")
	if got := ForSkills(1000); got != memoryFloor {
		t.Errorf("1,000 skills: limit %d, want the floor %d", got, memoryFloor)
	}
	if got, want := ForSkills(1_000_000), int64(1_000_000*memoryPerSkill); got != want {
		t.Errorf("1,000,000 skills: limit %d, want %d", got, want)
	}
	t.Setenv("GOMEMLIMIT", "2GiB")
	debug.SetMemoryLimit(2 << 30) // what the runtime read from GOMEMLIMIT at start
	if got := ForSkills(1_000_000); got != 2<<30 {
		t.Errorf("with GOMEMLIMIT: limit %d, want GOMEMLIMIT's %d", got, 2<<30)
	}
}
