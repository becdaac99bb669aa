//go:build js && wasm

package main

import (
	"errors"
	"syscall/js"

	"github.com/syumai/workers"
)

// main decodes the artifact entry.mjs hands over and serves requests. With context.persistent
// set (entry.mjs's default) the program never returns, so one Go runtime and one decoded
// artifact serve every request of the isolate; without it, it returns after one request, which
// is how syumai/workers' stock worker.mjs runs a program (kept to measure the difference).
func main() {
	ctx := js.Global().Get("context")
	s, err := newServer(artifact(ctx.Get("artifact")))
	if err != nil {
		// entry.mjs answers every request with this error until a start succeeds.
		js.Global().Get("console").Call("error", err.Error())
		ctx.Get("binding").Set("startError", err.Error())
		return
	}
	workers.ServeNonBlock(s)
	workers.Ready()
	if ctx.Get("persistent").Truthy() {
		select {}
	}
	<-workers.Done()
}

// artifact copies the artifact's bytes (an ArrayBuffer or a Uint8Array) into Go memory; the
// graph reads them in place from then on.
func artifact(v js.Value) []byte {
	if v.Type() != js.TypeObject {
		return nil
	}
	if !v.InstanceOf(js.Global().Get("Uint8Array")) {
		v = js.Global().Get("Uint8Array").New(v)
	}
	b := make([]byte, v.Get("byteLength").Int())
	if js.CopyBytesToGo(b, v) != len(b) {
		panic(errors.New("worker: artifact: short copy"))
	}
	return b
}
