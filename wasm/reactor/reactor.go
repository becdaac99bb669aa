// Command reactor is caskg's WebAssembly entry point: a WASI reactor (GOOS=wasip1,
// -buildmode=c-shared) that every WASM host loads — the JS module in browsers, workers and Node,
// and the Go package over wazero. It is a thin adapter: artifact bytes and request JSON in,
// response JSON out, everything else is the engine's.
//
// # ABI
//
// All exports take and return plain integers. A "packed" result is ptr<<32 | len of a buffer in
// linear memory that the host reads and then frees with free(ptr).
//
//	alloc(size u32) u32                 a buffer the host may write; 0 if size is out of range
//	free(ptr u32)                       releases a buffer from alloc or a packed result
//	load(ptr u32, len u32) u64          decodes the artifact in the buffer at ptr and keeps it:
//	                                    < 1<<32: the handle; else packed {"error": "..."}
//	query(handle u32, ptr, len u32) u64 packed response JSON for the request JSON at ptr
//	tape(handle u32, ptr, len u32) u64  query's response as wire's tape, or query's {"error"}
//	info(handle u32) u64                packed {"skills", "edges", "terms", "bytes", "format", "params", "learning"}
//	unload(handle u32) u32              1 if the handle existed; releases it and its artifact
//	version() u64                       packed {"version", "format", "go"}
//
// load takes the buffer over: it belongs to the handle (the graph reads the artifact in place)
// and is released with it, or at once if decoding fails; the host must not free or write it.
// query only reads its buffer; the host frees it. The request is engine.Request as JSON, and
// the response engine.Response as JSON (the schema of `caskg query --json`) or {"error": "..."}.
// Every failure, a panic included, comes back as such an error object, never as a trap; the one
// exception is the Go runtime running out of memory (beyond the host's limit), which traps after
// printing why to standard error. Results nobody frees stay allocated. tape answers as query
// does, but with the response as the tokens of wasm/internal/wire's tape.go, from which a
// JavaScript host builds the value of the JSON without text to format or parse (caskg.js); an
// error stays the JSON object, told apart by its second byte, '"' where a tape has 'k'.
//
// A reactor is single-threaded: hosts serialize calls into one instance and run several
// instances for concurrency.
package main

import (
	"errors"
	"runtime"
	"strconv"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/internal/wire"
)

// loaded is one artifact and the engine over it. data is the artifact the graph reads in place;
// holding it here keeps it alive for as long as the handle exists.
type loaded struct {
	data []byte
	eng  *engine.Engine
}

// reactor is the state behind the exports: the loaded artifacts by handle. Like everything in
// this package it avoids fmt and encoding/json, which would add about 150 KB to the module's
// compressed size.
type reactor struct {
	handles map[uint32]*loaded
	next    uint32
}

func newReactor() *reactor { return &reactor{handles: map[uint32]*loaded{}, next: 1} }

// errorJSON is the body of every failure.
func errorJSON(err error) []byte {
	b := append([]byte(`{"error":`), jsontext.AppendString(nil, err.Error())...)
	return append(b, '}')
}

// guard turns a panic in the engine or the decoder into an error object, so a bug shows up as
// an answer and not as a trap that would take the instance down.
func guard(out *[]byte) {
	r := recover()
	if r == nil {
		return
	}
	*out = errorJSON(errors.New("reactor: internal error: " + errtext.Recovered(r)))
}

// load decodes data and keeps it under a new handle; on failure it returns the error object.
func (r *reactor) load(data []byte) (h uint32, out []byte) {
	defer guard(&out)
	g, err := graphs.Decode(data)
	if err != nil {
		return 0, errorJSON(err)
	}
	eng := engine.New(g)
	for r.next == 0 || r.handles[r.next] != nil {
		r.next++
	}
	h = r.next
	r.next++
	r.handles[h] = &loaded{data: data, eng: eng}
	return h, nil
}

// errHandle names a handle that was never returned by load or was unloaded.
func errHandle(h uint32) error {
	return errors.New("reactor: no artifact loaded as handle " + strconv.FormatUint(uint64(h), 10))
}

// query answers the request JSON req with the artifact behind h, appending the response JSON to
// buf (empty; a buffer the host freed, so that a query does not grow a new one from nothing).
func (r *reactor) query(h uint32, req, buf []byte) []byte { return r.answer(h, req, buf, false) }

// answer is query, with the response as wire's tape if tape is set.
func (r *reactor) answer(h uint32, req, buf []byte, tape bool) (out []byte) {
	defer guard(&out)
	l := r.handles[h]
	if l == nil {
		return errorJSON(errHandle(h))
	}
	q, err := wire.DecodeRequest(req)
	if err != nil {
		return errorJSON(errors.New("reactor: request: " + err.Error()))
	}
	resp, err := l.eng.Query(q)
	if err != nil {
		return errorJSON(err)
	}
	var b []byte
	if tape {
		b, err = wire.AppendResponseTape(buf[:0], &resp)
	} else {
		b, err = wire.AppendResponse(buf[:0], &resp)
	}
	if err != nil {
		return errorJSON(errors.New("reactor: response: " + err.Error()))
	}
	return b
}

// info describes the artifact behind h: {"skills", "edges", "terms", "bytes", "format",
// "params", "learning"}, params being the build parameters as stored (or null if they are not
// JSON) and learning engine.LearningOf's {"runs", "live_edges", "cold", "note"}.
func (r *reactor) info(h uint32) (out []byte) {
	defer guard(&out)
	l := r.handles[h]
	if l == nil {
		return errorJSON(errHandle(h))
	}
	g := l.eng.Graph()
	maj, mnr := g.Version()
	// The counts in a loop: an append of each cost the module 1 KB.
	var b []byte
	for i, n := range [...]int{g.NumSkills(), g.NumEdges(), g.NumTerms(), g.Size()} {
		b = append(b, [...]string{`{"skills":`, `,"edges":`, `,"terms":`, `,"bytes":`}[i]...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `,"format":`...)
	b = jsontext.AppendString(b, formatVersion(maj, mnr))
	b = append(b, `,"params":`...)
	if p := g.Params(); len(p) > 0 && jsontext.Valid(p) {
		b = append(b, p...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"learning":`...)
	b = engine.LearningOf(g).AppendJSON(b)
	return append(b, '}')
}

func (r *reactor) unload(h uint32) bool {
	_, ok := r.handles[h]
	delete(r.handles, h)
	return ok
}

func formatVersion(major, minor int) string {
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

// versionJSON is {"version", "format", "go"}: the module's version, the artifact format version
// it writes and reads (any minor of its major), and the Go release it was built with.
func versionJSON() []byte {
	b := []byte(`{"version":`)
	b = jsontext.AppendString(b, engine.Version)
	b = append(b, `,"format":`...)
	b = jsontext.AppendString(b, formatVersion(graphs.Major, graphs.Minor))
	b = append(b, `,"go":`...)
	b = jsontext.AppendString(b, runtime.Version())
	return append(b, '}')
}
