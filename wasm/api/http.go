//go:build !js

package api

import (
	"net/http"

	"github.com/caskg/caskg/wasm/service"
)

// ServeHTTP answers one request of Go's net/http: the adapter of hosts that have it (caskg
// serve). The edge worker, built for js, adapts the Workers runtime's requests instead and
// links none of net/http.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	WriteResponse(w, h.Serve(FromHTTP(r)))
}

// FromHTTP is r as the API reads it.
func FromHTTP(r *http.Request) *service.Request {
	return &service.Request{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Header: r.Header, Body: r.Body, ContentLength: r.ContentLength, Context: r.Context()}
}

// WriteError writes the error envelope every answer other than 200 has, {"error": msg}, with
// the headers of every JSON answer. A host uses it for its own errors around the API.
func WriteError(w http.ResponseWriter, status int, msg string) {
	resp := &service.Response{}
	resp.SetJSON(status, service.ErrorBody(msg))
	WriteResponse(w, resp)
}

// WriteResponse sends resp through w.
func WriteResponse(w http.ResponseWriter, resp *service.Response) {
	hd := w.Header()
	for _, f := range resp.Header {
		if f.Name == "Vary" {
			hd.Add(f.Name, f.Value)
		} else {
			hd.Set(f.Name, f.Value)
		}
	}
	w.WriteHeader(resp.Status)
	if resp.Body != nil {
		_, _ = w.Write(resp.Body)
	}
}
