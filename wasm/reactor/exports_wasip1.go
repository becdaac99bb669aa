//go:build wasip1

package main

import (
	"errors"
	"strconv"
	"unsafe"
)

// The host-visible side of the reactor: integers in and out, buffers tracked by address.

// maxAlloc bounds one buffer. Linear memory is at most 4 GiB and the Go runtime cannot recover
// from running out of it, so a request beyond this fails at alloc rather than as a trap.
const maxAlloc = 1 << 30

var (
	state = newReactor()
	// buffers keeps every buffer the host can see reachable until it is freed or, for an
	// artifact, handed to load. Go's collector does not move objects, so an address stays
	// valid for as long as its entry exists.
	buffers = map[uint32][]byte{}
)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// keep registers b as host-visible and returns it packed.
func keep(b []byte) uint64 {
	if len(b) == 0 {
		b = make([]byte, 0, 1) // a distinct, non-zero address even for an empty result
	}
	p := addr(b)
	buffers[p] = b
	return uint64(p)<<32 | uint64(len(b))
}

// buffer returns the first n bytes of the buffer at ptr, or nil and false if ptr is not one.
func buffer(ptr, n uint32) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	b, ok := buffers[ptr]
	if !ok || uint64(n) > uint64(cap(b)) {
		return nil, false
	}
	return b[:n:n], true
}

//go:wasmexport alloc
func alloc(size uint32) uint32 {
	if size > maxAlloc {
		return 0
	}
	b := make([]byte, max(size, 1))
	p := addr(b)
	buffers[p] = b
	return p
}

// spare is the largest buffer the host freed since the last query, which the next query writes
// its response into: a response appended from nothing grew through half a dozen buffers, and
// in WebAssembly allocations and the collections they bring were a tenth of a short query.
var spare []byte

//go:wasmexport free
func free(ptr uint32) {
	if b := buffers[ptr]; cap(b) > cap(spare) {
		spare = b
	}
	delete(buffers, ptr)
}

//go:wasmexport load
func load(ptr, n uint32) uint64 {
	data, ok := buffer(ptr, n)
	if !ok {
		return keep(errorJSON(errBuffer(ptr, n)))
	}
	delete(buffers, ptr) // the handle owns it now, or nobody does
	h, errJSON := state.load(data)
	if errJSON != nil {
		return keep(errJSON)
	}
	return uint64(h)
}

//go:wasmexport query
func query(h, ptr, n uint32) uint64 { return answer(h, ptr, n, false) }

//go:wasmexport tape
func tape(h, ptr, n uint32) uint64 { return answer(h, ptr, n, true) }

func answer(h, ptr, n uint32, tape bool) uint64 {
	req, ok := buffer(ptr, n)
	if !ok {
		return keep(errorJSON(errBuffer(ptr, n)))
	}
	buf := spare // freed, so neither the host's nor req, which buffer found among the kept
	spare = nil
	return keep(state.answer(h, req, buf, tape))
}

//go:wasmexport info
func info(h uint32) uint64 { return keep(state.info(h)) }

//go:wasmexport unload
func unload(h uint32) uint32 {
	if state.unload(h) {
		return 1
	}
	return 0
}

//go:wasmexport version
func version() uint64 { return keep(versionJSON()) }

// main does not run in a reactor: _initialize runs the package initializers and returns.
func main() {}

// errBuffer names a pointer that is not the start of a buffer from alloc, or a length beyond it.
func errBuffer(ptr, n uint32) error {
	return errors.New("reactor: " + strconv.FormatUint(uint64(n), 10) + " bytes at " +
		strconv.FormatUint(uint64(ptr), 10) + ": not a buffer from alloc, or longer than it")
}
