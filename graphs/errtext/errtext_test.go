package errtext

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// Each helper must give the text of the fmt verb it stands in for, so that error messages read
// the same as they did when they were built with fmt.
func TestMatchesFmt(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"Itoa int", Itoa(-42), fmt.Sprintf("%d", -42)},
		{"Itoa min int64", Itoa(int64(math.MinInt64)), fmt.Sprintf("%d", int64(math.MinInt64))},
		{"Itoa max uint64", Itoa(uint64(math.MaxUint64)), fmt.Sprintf("%d", uint64(math.MaxUint64))},
		{"Itoa uint8", Itoa(uint8(200)), fmt.Sprintf("%d", uint8(200))},
		{"Itoa int8", Itoa(int8(-128)), fmt.Sprintf("%d", int8(-128))},
		{"Ftoa float32", Ftoa(float32(0.1)), fmt.Sprintf("%v", float32(0.1))},
		{"Ftoa float64", Ftoa(0.1), fmt.Sprintf("%v", 0.1)},
		{"Ftoa large", Ftoa(1e21), fmt.Sprintf("%v", 1e21)},
		{"Ftoa small float32", Ftoa(float32(1e-7)), fmt.Sprintf("%v", float32(1e-7))},
		{"Ftoa NaN", Ftoa(math.NaN()), fmt.Sprintf("%v", math.NaN())},
		{"Ftoa -Inf", Ftoa(float32(math.Inf(-1))), fmt.Sprintf("%v", float32(math.Inf(-1)))},
		{"Hex8 small", Hex8(0xab), fmt.Sprintf("%08x", 0xab)},
		{"Hex8 full", Hex8(0xdeadbeef), fmt.Sprintf("%08x", 0xdeadbeef)},
		{"Hex8 zero", Hex8(0), fmt.Sprintf("%08x", 0)},
		{"Quote", Quote("a\"b\n\xff"), fmt.Sprintf("%q", "a\"b\n\xff")},
		{"New", New("engine: no").Error(), errors.New("engine: no").Error()},
		{"Wrap", Wrap(errBase, ": section 3").Error(), fmt.Errorf("%w: section 3", errBase).Error()},
		{"Prefix", Prefix("graphs: params: ", errBase).Error(), fmt.Errorf("graphs: params: %w", errBase).Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, fmt gives %q", tt.got, tt.want)
			}
		})
	}
}

var errBase = errors.New("graphs: corrupt artifact")

func TestWrapUnwraps(t *testing.T) {
	for _, err := range []error{Wrap(errBase, ": x"), Prefix("y: ", errBase), Wrap(Prefix("y: ", errBase), ": x")} {
		if !errors.Is(err, errBase) {
			t.Errorf("%q does not wrap %q", err, errBase)
		}
	}
}

func TestRecovered(t *testing.T) {
	var nilMap map[string]int
	tests := []struct {
		name string
		in   func()
		want string
	}{
		{"runtime error", func() { nilMap["x"] = 1 }, "assignment to entry in nil map"},
		{"error", func() { panic(errBase) }, "graphs: corrupt artifact"},
		{"string", func() { panic("engine: broken invariant") }, "engine: broken invariant"},
		{"other", func() { panic(42) }, "unknown panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			func() {
				defer func() { got = Recovered(recover()) }()
				tt.in()
			}()
			if got != tt.want {
				t.Errorf("Recovered = %q, want %q", got, tt.want)
			}
		})
	}
}
