//go:build js && wasm

package main

import (
	"context"
	"errors"
	"syscall/js"

	"github.com/caskg/caskg/wasm/api"
	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare/kv"
)

// main decodes the artifact entry.mjs hands over and serves requests. With context.persistent
// set (entry.mjs's default) the program never returns, so one Go runtime and one decoded
// artifact serve every request of the isolate; without it, it returns after one request, which
// is how syumai/workers' stock worker.mjs runs a program (kept to measure the difference).
func main() {
	ctx := js.Global().Get("context")
	s, err := newServer(artifact(ctx.Get("artifact")), feedbackStore(ctx.Get("env")))
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

// feedbackStore is the KV store of feedback when env binds a namespace as FeedbackBinding, else
// nil (POST /v1/feedback then answers 501).
func feedbackStore(env js.Value) api.FeedbackStore {
	if env.Type() != js.TypeObject || env.Get(FeedbackBinding).Type() != js.TypeObject {
		return nil
	}
	ns, err := kv.NewNamespace(FeedbackBinding)
	if err != nil {
		return nil
	}
	put := func(_ context.Context, key, value string) error { return ns.PutString(key, value, nil) }
	return newKVFeedback(put, truthy(env.Get(FeedbackQueryText).String()), nil, nil)
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
