// Package host runs caskg's WebAssembly module (bin/caskg.wasm, built from wasm/reactor by
// `make wasm`) inside Go programs over wazero, a WebAssembly runtime in pure Go. It gives a Go
// program the answers of every other host — browser, worker, Node — from the same module bytes,
// with the guest's memory and time bounded by the host.
//
// A module instance is single-threaded, so a Pool, the artifact loaded into a set of instances,
// hands each concurrent caller an instance of its own, each holding its own copy of the
// artifact; instances are created on demand up to Options.Instances. A call does not start once its context has ended and, with
// Options.Interruptible, stops when it ends; an instance stopped that way, or one that traps or
// exits (for example on reaching the memory limit), is discarded and the next caller gets a
// fresh one.
package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/caskg/caskg/wasm/engine"
)

// DefaultMemoryLimitPages is the default cap on an instance's linear memory: 16,384 pages of
// 64 KiB, 1 GiB.
const DefaultMemoryLimitPages = 16384

// Options configure a Module. The zero value is ready to use.
type Options struct {
	// Instances bounds the instances serving one Pool at a time, and so its concurrency;
	// 0 means runtime.GOMAXPROCS(0).
	Instances int
	// MemoryLimitPages caps each instance's linear memory in 64 KiB pages; 0 means
	// DefaultMemoryLimitPages. An instance that needs more fails its call and is discarded.
	MemoryLimitPages uint32
	// Cache shares compiled code between modules and, from wazero.NewCompilationCacheWithDir,
	// between processes; the caller closes it after the modules. Nil means a cache in CacheDir
	// that the Module owns.
	Cache wazero.CompilationCache
	// CacheDir is where a Module without Cache keeps the machine code it compiles, so that the
	// next process to load the same module bytes with the same wazero skips compiling (a few
	// hundred milliseconds; BenchmarkStart). "" means DefaultCacheDir; NoCache turns it off.
	// A directory that cannot be made costs only the cache, not the Module.
	CacheDir string
	NoCache  bool
	// Interruptible makes a call stop as soon as its context ends; otherwise a context that has
	// ended only keeps calls from starting. It costs speed: wazero then checks for cancellation
	// at every loop of the module, which makes a query about 4× slower. Every call finishes on
	// its own — a query's work is bounded by the request limits, a load's by the artifact — so
	// this is for hosts that need hard deadlines on untrusted input.
	Interruptible bool
	// Stderr receives what the module writes to standard error (the Go runtime's fatal errors);
	// nil discards it. Its first line is also part of the error of a failed call.
	Stderr io.Writer
}

// Module is the compiled WebAssembly module, ready to load artifacts. It is safe for concurrent
// use.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	opts     Options
	cache    wazero.CompilationCache // the cache the Module made (Options.CacheDir); nil if none
}

// DefaultCacheDir is the compilation cache of a Module without Options.Cache or CacheDir:
// caskg/wazero under the user's cache directory (os.UserCacheDir), or "" when there is none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "caskg", "wazero")
}

// Compile compiles the module bytes for this machine and checks that they have the exports of
// wasm/reactor.
func Compile(ctx context.Context, wasm []byte, opts *Options) (*Module, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Instances <= 0 {
		o.Instances = runtime.GOMAXPROCS(0)
	}
	if o.MemoryLimitPages == 0 {
		o.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if o.MemoryLimitPages > 65536 {
		return nil, fmt.Errorf("host: memory limit of %d pages is beyond the 65,536 of 32-bit memory", o.MemoryLimitPages)
	}
	cfg := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(o.Interruptible).
		WithMemoryLimitPages(o.MemoryLimitPages)
	var owned wazero.CompilationCache
	if o.Cache == nil && !o.NoCache {
		dir := o.CacheDir
		if dir == "" {
			dir = DefaultCacheDir()
		}
		if dir != "" {
			if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
				owned, o.Cache = c, c
			}
		}
	}
	if o.Cache != nil {
		cfg = cfg.WithCompilationCache(o.Cache)
	}
	fail := func(err error) (*Module, error) {
		if owned != nil {
			owned.Close(ctx)
		}
		return nil, err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return fail(fmt.Errorf("host: instantiating WASI: %w", err))
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return fail(fmt.Errorf("host: compiling the module: %w", err))
	}
	exports := compiled.ExportedFunctions()
	for _, name := range []string{"_initialize", "alloc", "free", "load", "query", "info", "unload", "version"} {
		if exports[name] == nil {
			rt.Close(ctx)
			return fail(fmt.Errorf("host: the module does not export %q: not a caskg reactor (make wasm builds one)", name))
		}
	}
	return &Module{rt: rt, compiled: compiled, opts: o, cache: owned}, nil
}

// Close releases the module, every Pool loaded from it and the compilation cache it made.
func (m *Module) Close(ctx context.Context) error {
	err := m.rt.Close(ctx)
	if m.cache != nil {
		err = errors.Join(err, m.cache.Close(ctx))
	}
	return err
}

// Load compiles the module and loads an artifact into it: Compile followed by Module.Load, with
// the Pool owning the Module (Pool.Close closes both).
func Load(ctx context.Context, wasm, artifact []byte, opts *Options) (*Pool, error) {
	m, err := Compile(ctx, wasm, opts)
	if err != nil {
		return nil, err
	}
	p, err := m.Load(ctx, artifact)
	if err != nil {
		m.Close(ctx)
		return nil, err
	}
	p.owned = m
	return p, nil
}

// Error is a failure the module reported as {"error": "..."}: an artifact it cannot decode or a
// request it refuses. The instance that reported it stays in service.
type Error struct {
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Info describes a loaded artifact and the module serving it.
type Info struct {
	Skills int             `json:"skills"`
	Edges  int             `json:"edges"`
	Terms  int             `json:"terms"`
	Bytes  int             `json:"bytes"`
	Format string          `json:"format"` // the artifact's format version, major.minor
	Params json.RawMessage `json:"params"` // the build parameters, as stored
	Module Version         `json:"module"`
}

// Version identifies the module.
type Version struct {
	Version string `json:"version"` // caskg's version
	Format  string `json:"format"`  // the newest artifact format it reads
	Go      string `json:"go"`      // the Go release it was built with
}

// Pool answers queries over one artifact with a pool of module instances, each holding the
// artifact. It is safe for concurrent use.
type Pool struct {
	mod      *Module
	owned    *Module // closed with the pool when Load made it
	artifact []byte
	info     Info

	slots chan struct{}  // one token per instance in use
	idle  chan *instance // instances ready for a call

	mu     sync.Mutex
	closed bool
}

// Load loads an artifact: it instantiates the module once and decodes the artifact in it, so a
// bad artifact fails here. Further instances load the same bytes when concurrent callers need
// them; the caller must not modify artifact while the Pool is in use.
func (m *Module) Load(ctx context.Context, artifact []byte) (*Pool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &Pool{
		mod:      m,
		artifact: artifact,
		slots:    make(chan struct{}, m.opts.Instances),
		idle:     make(chan *instance, m.opts.Instances),
	}
	in, err := p.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	info, err := in.call(ctx, "info", in.handle)
	if err == nil {
		err = in.result(ctx, info, &p.info)
	}
	var version uint64
	if err == nil {
		version, err = in.call(ctx, "version")
	}
	if err == nil {
		err = in.result(ctx, version, &p.info.Module)
	}
	if err != nil {
		in.close(ctx)
		return nil, err
	}
	p.idle <- in
	return p, nil
}

// Info describes the artifact and the module.
func (p *Pool) Info() Info { return p.info }

// Query ranks the artifact's skills for req, as engine.Engine.Query does natively.
func (p *Pool) Query(ctx context.Context, req engine.Request) (engine.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return engine.Response{}, fmt.Errorf("host: request: %w", err)
	}
	out, err := p.QueryJSON(ctx, b)
	if err != nil {
		return engine.Response{}, err
	}
	var resp engine.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return engine.Response{}, fmt.Errorf("host: response: %w", err)
	}
	return resp, nil
}

// QueryJSON answers a request given as JSON (engine.Request's fields) with the module's response
// JSON, the bytes `caskg query --json` prints. A request the module refuses is an *Error.
func (p *Pool) QueryJSON(ctx context.Context, req []byte) ([]byte, error) {
	in, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	out, err := in.query(ctx, req)
	var modErr *Error
	p.release(ctx, in, err == nil || errors.As(err, &modErr))
	return out, err
}

// Close releases the instances once the calls in progress have finished (or ctx ends). If Load
// made the Module, Close closes it too.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	var errs []error
	// Holding every slot means no call is in progress.
	held := 0
	for held < cap(p.slots) && len(errs) == 0 {
		select {
		case p.slots <- struct{}{}:
			held++
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	for {
		select {
		case in := <-p.idle:
			errs = append(errs, in.close(ctx))
			continue
		default:
		}
		break
	}
	if p.owned != nil {
		errs = append(errs, p.owned.Close(ctx))
	}
	for range held {
		<-p.slots // later calls find a slot, then the pool closed
	}
	return errors.Join(errs...)
}

var errClosed = errors.New("host: pool is closed")

// acquire returns an instance for one call: an idle one, or a new one while fewer than
// Options.Instances are in use.
func (p *Pool) acquire(ctx context.Context) (*instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		<-p.slots
		return nil, errClosed
	}
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	in, err := p.newInstance(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return in, nil
}

// release returns an instance to the pool, or discards it if it failed or the pool closed.
func (p *Pool) release(ctx context.Context, in *instance, healthy bool) {
	p.mu.Lock()
	if healthy && !p.closed {
		p.idle <- in // never blocks: at most cap(slots) instances exist
		in = nil
	}
	p.mu.Unlock()
	if in != nil {
		in.close(context.WithoutCancel(ctx))
	}
	<-p.slots
}

// instance is one module instance with the artifact loaded.
type instance struct {
	mod    api.Module
	mem    api.Memory
	fns    map[string]api.Function
	stderr *head
	handle uint64
	stack  [3]uint64
	reqPtr uint32 // a request buffer kept between calls
	reqCap uint32
}

func (p *Pool) newInstance(ctx context.Context) (*instance, error) {
	m := p.mod
	in := &instance{stderr: &head{w: m.opts.Stderr}, fns: map[string]api.Function{}}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: any number of instances
		WithStartFunctions("_initialize").
		WithStderr(in.stderr).
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime()
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		return nil, in.wrap(ctx, "instantiating the module", err)
	}
	in.mod, in.mem = mod, mod.Memory()
	for name := range m.compiled.ExportedFunctions() {
		in.fns[name] = mod.ExportedFunction(name)
	}
	ptr, err := in.put(ctx, p.artifact)
	if err == nil {
		// load keeps the buffer: it holds the artifact the graph reads in place.
		var res uint64
		if res, err = in.call(ctx, "load", uint64(ptr), uint64(len(p.artifact))); err == nil {
			if res>>32 != 0 { // a packed error, not a handle
				err = in.result(ctx, res, nil)
			}
			in.handle = res
		}
	}
	if err != nil {
		in.close(ctx)
		return nil, err
	}
	return in, nil
}

func (in *instance) close(ctx context.Context) error { return in.mod.Close(ctx) }

// call calls an export and returns its result (0 if it has none). A trap, an exit or the end of
// ctx comes back as an error that names it; the instance is unusable afterwards.
func (in *instance) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	stack := in.stack[:max(len(args), 1)]
	copy(stack, args)
	if err := in.fns[name].CallWithStack(ctx, stack); err != nil {
		return 0, in.wrap(ctx, name, err)
	}
	return stack[0], nil
}

func (in *instance) wrap(ctx context.Context, what string, err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeContextCanceled, sys.ExitCodeDeadlineExceeded:
			if ctx.Err() != nil {
				return fmt.Errorf("host: %s: %w", what, ctx.Err())
			}
		}
		err = fmt.Errorf("module exited with code %d", exit.ExitCode())
	} else if first, _, ok := strings.Cut(err.Error(), "\n"); ok {
		err = &trap{first, err} // without wazero's stack trace of unnamed functions
	}
	// What the Go runtime printed before it gave up ("fatal error: out of memory", a stack
	// trace) says more than the trap; keep its first line.
	if s, _, _ := strings.Cut(in.stderr.String(), "\n"); s != "" {
		return fmt.Errorf("host: %s: %w (module stderr: %s)", what, err, s)
	}
	return fmt.Errorf("host: %s: %w", what, err)
}

// trap is a runtime error shortened to its first line.
type trap struct {
	msg string
	err error
}

func (t *trap) Error() string { return t.msg }
func (t *trap) Unwrap() error { return t.err }

// put copies data into a new module buffer.
func (in *instance) put(ctx context.Context, data []byte) (uint32, error) {
	if uint64(len(data)) > 1<<30 {
		return 0, fmt.Errorf("host: %d bytes are more than the module takes in one buffer", len(data))
	}
	res, err := in.call(ctx, "alloc", uint64(len(data)))
	if err != nil {
		return 0, err
	}
	ptr := uint32(res)
	if ptr == 0 || !in.mem.Write(ptr, data) {
		return 0, fmt.Errorf("host: the module cannot allocate %d bytes", len(data))
	}
	return ptr, nil
}

// take copies out and frees the buffer of a packed result.
func (in *instance) take(ctx context.Context, packed uint64) ([]byte, error) {
	ptr, n := uint32(packed>>32), uint32(packed)
	view, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("host: the module returned %d bytes at %d, outside its memory", n, ptr)
	}
	out := append([]byte(nil), view...)
	if _, err := in.call(ctx, "free", uint64(ptr)); err != nil {
		return nil, err
	}
	return out, nil
}

// result reads a packed JSON result into v (if not nil), turning {"error": ...} into an *Error.
func (in *instance) result(ctx context.Context, packed uint64, v any) error {
	out, err := in.take(ctx, packed)
	if err != nil {
		return err
	}
	if err := moduleError(out); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("host: module answer %.80q: %w", out, err)
	}
	return nil
}

// moduleError returns the *Error of an {"error": ...} answer, or nil for any other answer.
func moduleError(out []byte) error {
	if len(out) < 9 || string(out[:9]) != `{"error":` {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &e); err != nil {
		return fmt.Errorf("host: module answer %.80q: %w", out, err)
	}
	return &Error{Msg: e.Error}
}

func (in *instance) query(ctx context.Context, req []byte) ([]byte, error) {
	if uint32(len(req)) > in.reqCap || in.reqPtr == 0 {
		if in.reqPtr != 0 {
			if _, err := in.call(ctx, "free", uint64(in.reqPtr)); err != nil {
				return nil, err
			}
			in.reqPtr, in.reqCap = 0, 0
		}
		size := max(uint32(len(req)), 4096)
		res, err := in.call(ctx, "alloc", uint64(size))
		if err != nil {
			return nil, err
		}
		if res == 0 {
			return nil, fmt.Errorf("host: the module cannot allocate %d bytes", size)
		}
		in.reqPtr, in.reqCap = uint32(res), size
	}
	if !in.mem.Write(in.reqPtr, req) {
		return nil, errors.New("host: request buffer outside the module's memory")
	}
	res, err := in.call(ctx, "query", in.handle, uint64(in.reqPtr), uint64(len(req)))
	if err != nil {
		return nil, err
	}
	out, err := in.take(ctx, res)
	if err != nil {
		return nil, err
	}
	if err := moduleError(out); err != nil {
		return nil, err
	}
	return out, nil
}

// head keeps the first bytes a module writes to standard error — where the Go runtime says why
// it gave up — for error messages, and passes everything on to w.
type head struct {
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

const headSize = 4096

func (h *head) Write(p []byte) (int, error) {
	h.mu.Lock()
	if n := min(len(p), headSize-len(h.buf)); n > 0 {
		h.buf = append(h.buf, p[:n]...)
	}
	h.mu.Unlock()
	if h.w != nil {
		h.w.Write(p)
	}
	return len(p), nil
}

func (h *head) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(trimSpace(h.buf))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
