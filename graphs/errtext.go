package graphs

import (
	"strconv"
	"unsafe"
)

// Error texts are built with strconv rather than fmt: fmt and its reflection would add tens of KB
// to the WebAssembly module, which links this package.

// wrappedError is an error with its own text that wraps another, as fmt.Errorf("...%w...") makes.
type wrappedError struct {
	msg string
	err error
}

func (e *wrappedError) Error() string { return e.msg }
func (e *wrappedError) Unwrap() error { return e.err }

// wrapErr is fmt.Errorf("%w"+rest, err). It is not inlined: it would grow each of the many
// error sites of Decode, and the WebAssembly module with them.
//
//go:noinline
func wrapErr(err error, rest string) error { return &wrappedError{err.Error() + rest, err} }

// wrapTail wraps err under msg, which already includes err's text.
func wrapTail(err error, msg string) error { return &wrappedError{msg, err} }

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

// quote is strconv.Quote, fmt's %q of a string. It is not inlined, like wrapErr.
//
//go:noinline
func quote(s string) string { return strconv.Quote(s) }

// hex8 formats v as fmt's %08x does.
func hex8(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}
