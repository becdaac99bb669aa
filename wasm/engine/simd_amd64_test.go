//go:build amd64 && !purego

package engine

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestHasAVX2 holds the engine's own CPUID check to golang.org/x/sys/cpu's, and the kernels to
// its answer: set exactly when the CPU has AVX2.
func TestHasAVX2(t *testing.T) {
	if got, want := hasAVX2(), cpu.X86.HasAVX2; got != want {
		t.Errorf("hasAVX2() = %v, x/sys/cpu says %v", got, want)
	}
	if (simdDots != nil) != cpu.X86.HasAVX2 || (simdApprox != nil) != cpu.X86.HasAVX2 {
		t.Errorf("simdDots set %v, simdApprox set %v on a CPU with AVX2 %v", simdDots != nil, simdApprox != nil, cpu.X86.HasAVX2)
	}
}
