// Package errtext builds the error values and texts of the artifact format (graphs), the
// retrieval engine (wasm/engine) and its hosts with strconv rather than fmt: fmt and its
// reflection would add tens of KB to the WebAssembly module, which links them. Each function
// gives the text the fmt verb named in its comment gives. Like graphs, it imports the standard
// library only.
//
// For a Go program: it is public because graphs and the WebAssembly packages share it; outside a
// size-bound module, fmt gives the same texts.
package errtext

import (
	"errors"
	"strconv"
	"unsafe"
)

// Integer is any integer type.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Itoa formats an integer as fmt's %d does.
func Itoa[T Integer](v T) string {
	if v < 0 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// Ftoa formats a float as fmt's %v does.
func Ftoa[T ~float32 | ~float64](f T) string {
	if unsafe.Sizeof(f) == 4 {
		return strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 64)
}

// Hex8 formats v as fmt's %08x does.
func Hex8(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}

// Quote is strconv.Quote, fmt's %q of a string.
//
// Quote, New and Wrap are not inlined: inlined at each of the many error sites of the decoder
// and the engine, they would grow the WebAssembly module.
//
//go:noinline
func Quote(s string) string { return strconv.Quote(s) }

// New is errors.New, not inlined (see Quote).
//
//go:noinline
func New(text string) error { return errors.New(text) }

// Wrap is fmt.Errorf("%w"+rest, err): err's text followed by rest, wrapping err. It is not
// inlined (see Quote).
//
//go:noinline
func Wrap(err error, rest string) error { return &wrapped{msg: err.Error() + rest, err: err} }

// Prefix is fmt.Errorf(prefix+"%w", err): prefix followed by err's text, wrapping err.
func Prefix(prefix string, err error) error { return &wrapped{msg: prefix + err.Error(), err: err} }

// Recovered is the text of a value recovered from a panic, for the error a host answers
// instead: fmt's %v of an error or a string, and "unknown panic" for anything else, whose
// formatting would need fmt.
func Recovered(p any) string {
	switch p := p.(type) {
	case error:
		return p.Error()
	case string:
		return p
	}
	return "unknown panic"
}

// wrapped is an error with its own text that wraps another, as fmt.Errorf("...%w...") makes.
type wrapped struct {
	msg string
	err error
	_   [0]func() // not comparable: no equality function for the type in the WebAssembly module
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
