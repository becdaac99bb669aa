package engine

import (
	"errors"
	"strconv"
	"unsafe"
)

// Error texts are built with strconv rather than fmt: fmt and its reflection would add tens of KB
// to the WebAssembly module, which links this package.

type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// itoa formats an integer as fmt's %d does.
func itoa[T integer](v T) string {
	if v < 0 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// ftoa formats a float as fmt's %v does.
func ftoa[T ~float32 | ~float64](f T) string {
	if unsafe.Sizeof(f) == 4 {
		return strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 64)
}

// newError is errors.New, not inlined: inlined at each of the engine's many error sites it would
// grow the WebAssembly module.
//
//go:noinline
func newError(text string) error { return errors.New(text) }
