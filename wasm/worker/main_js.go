//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall/js"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/service"
)

// main decodes the artifact entry.mjs hands over, binds handle for entry.mjs to call with each
// request, and never returns: one Go runtime and one decoded artifact serve every request of
// the isolate.
func main() {
	ctx := js.Global().Get("context")
	binding := ctx.Get("binding")
	tokens, err := feedbackTokens(ctx.Get("env"))
	var s *server
	if err == nil {
		s, err = newServer(artifact(ctx.Get("artifact")), ctx.Get("checksum").String(), feedbackStore(ctx.Get("env")), tokens)
	}
	if err != nil {
		// entry.mjs answers every request with this error until a start succeeds.
		js.Global().Get("console").Call("error", err.Error())
		binding.Set("startError", err.Error())
		return
	}
	binding.Set("maxBody", service.MaxBodyBytes)
	binding.Set("handle", js.FuncOf(s.handleJS))
	ready()
	select {}
}

// ready tells syumai/workers' glue (entry.mjs's import "workers") that the handler is bound.
//
//go:wasmimport workers ready
func ready()

// handleJS answers handle(method, path, query, headers, body, length): path still
// percent-encoded, query without '?', headers a Workers Headers, body a Uint8Array (undefined
// for none) and length the declared Content-Length (-1 unknown). It returns {status, headers:
// [[name, value]…], body: Uint8Array|null}, or a Promise of it for a request that may wait on
// KV.
func (s *server) handleJS(_ js.Value, args []js.Value) any {
	r := &service.Request{Method: args[0].String(), Path: args[1].String(), RawQuery: args[2].String(),
		Header: jsHeader{args[3]}, ContentLength: int64(args[5].Int()), Context: context.Background()}
	if args[4].Type() == js.TypeObject {
		r.Body = bytes.NewReader(artifact(args[4]))
	}
	if !s.waits(r) {
		return toJS(s.Serve(r))
	}
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, a []js.Value) any {
		resolve := a[0]
		executor.Release()
		go func() { resolve.Invoke(toJS(s.Serve(r))) }()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

// jsHeader reads a Workers Headers object.
type jsHeader struct{ v js.Value }

func (h jsHeader) Get(name string) string {
	if h.v.Type() != js.TypeObject {
		return ""
	}
	v := h.v.Call("get", name)
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}

func toJS(resp *service.Response) any {
	hd := make([]any, len(resp.Header))
	for i, f := range resp.Header {
		hd[i] = []any{f.Name, f.Value}
	}
	body := js.Null()
	if resp.Body != nil {
		body = js.Global().Get("Uint8Array").New(len(resp.Body))
		js.CopyBytesToJS(body, resp.Body)
	}
	return map[string]any{"status": resp.Status, "headers": hd, "body": body}
}

// feedbackStore is the KV store of feedback when env binds a namespace as FeedbackBinding, else
// nil (POST /v1/feedback then answers 501).
func feedbackStore(env js.Value) service.FeedbackStore {
	if env.Type() != js.TypeObject || env.Get(FeedbackBinding).Type() != js.TypeObject {
		return nil
	}
	ns := env.Get(FeedbackBinding)
	put := func(_ context.Context, key, value string) error { return await(ns.Call("put", key, value)) }
	return newKVFeedback(put, truthy(env.Get(FeedbackQueryText).String()), nil, nil)
}

// feedbackTokens reads the reporters' tokens from the secret FeedbackTokens; nil when it is not
// set. A secret that does not parse stops the worker's start, naming the entry at fault.
func feedbackTokens(env js.Value) (*service.Tokens, error) {
	if env.Type() != js.TypeObject {
		return nil, nil
	}
	v := env.Get(FeedbackTokens)
	if v.Type() != js.TypeString || strings.TrimSpace(v.String()) == "" {
		return nil, nil
	}
	t, err := service.ParseTokens(FeedbackTokens, v.String())
	if err != nil {
		return nil, errors.New("worker: " + err.Error())
	}
	return t, nil
}

// artifact copies bytes (an ArrayBuffer or a Uint8Array) into Go memory; the graph reads an
// artifact in place from then on.
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

// await waits for promise to settle: nil once it is fulfilled, its reason as an error when it
// is rejected. It is called on a goroutine of its own (handleJS), never the event loop's.
func await(promise js.Value) error {
	done := make(chan error, 1)
	var then, catch js.Func
	then = js.FuncOf(func(js.Value, []js.Value) any { done <- nil; return nil })
	catch = js.FuncOf(func(_ js.Value, a []js.Value) any {
		msg := "rejected"
		if len(a) > 0 {
			msg = a[0].Call("toString").String()
		}
		done <- errors.New("worker: KV: " + msg)
		return nil
	})
	defer then.Release()
	defer catch.Release()
	promise.Call("then", then, catch)
	return <-done
}

// waits reports whether answering r may wait on the runtime (a KV write): such a request is
// answered on a goroutine, the others synchronously, which is faster.
func (s *server) waits(r *service.Request) bool {
	return s.feedback && r.Method == "POST" && (r.Path == mcpPath || r.Path == api.Prefix+"feedback")
}

// truthy reports whether an environment variable's text turns an option on.
func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
