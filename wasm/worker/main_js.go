//go:build js && wasm

package main

import (
	"context"
	"errors"
	"strings"
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
	tokens, err := feedbackTokens(ctx.Get("env"))
	var s *server
	if err == nil {
		s, err = newServer(artifact(ctx.Get("artifact")), feedbackStore(ctx.Get("env")), tokens)
	}
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

// feedbackTokens reads the reporters' tokens from the secret FeedbackTokens; nil when it is not
// set. A secret that does not parse stops the worker's start, naming the entry at fault.
func feedbackTokens(env js.Value) (*api.Tokens, error) {
	if env.Type() != js.TypeObject {
		return nil, nil
	}
	v := env.Get(FeedbackTokens)
	if v.Type() != js.TypeString || strings.TrimSpace(v.String()) == "" {
		return nil, nil
	}
	t, err := api.ParseTokens(FeedbackTokens, v.String())
	if err != nil {
		return nil, errors.New("worker: " + err.Error())
	}
	return t, nil
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
