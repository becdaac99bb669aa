package service

import (
	"context"
	"io"
	"strconv"

	"github.com/caskg/caskg/graphs/jsontext"
)

// Header gives a request header's value by name, case-insensitively; "" when absent. Go's
// http.Header is one, and so is a wrapper of a Workers Request's headers.
type Header interface {
	Get(name string) string
}

// Request is one HTTP request as the API reads it; a host fills it from its transport.
type Request struct {
	Method   string
	Path     string // the path as sent, still percent-encoded ("/v1/skills/a%20b")
	RawQuery string // the query string without its '?'
	Header   Header // nil: no headers
	// Body is the request's body, nil for none. At most MaxBodyBytes+1 bytes of it are read.
	Body io.Reader
	// ContentLength is the body's declared length, -1 when unknown; over MaxBodyBytes the
	// body is refused unread.
	ContentLength int64
	Context       context.Context // nil: context.Background()
}

// HeaderValue is the request header name's value, "" when there are no headers.
func (r *Request) HeaderValue(name string) string {
	if r.Header == nil {
		return ""
	}
	return r.Header.Get(name)
}

// Ctx is the request's context, context.Background() when it has none.
func (r *Request) Ctx() context.Context {
	if r.Context == nil {
		return context.Background()
	}
	return r.Context
}

// Response is the API's answer: a status, header fields in the order set, and the body (nil
// for none). Every body is JSON, with its length.
type Response struct {
	Status int
	Header []Field
	Body   []byte
}

// Field is one header field of a Response.
type Field struct{ Name, Value string }

// Set sets the header field name to value, replacing a field of that name.
func (r *Response) Set(name, value string) {
	for i := range r.Header {
		if r.Header[i].Name == name {
			r.Header[i].Value = value
			return
		}
	}
	r.Add(name, value)
}

// Add appends the header field name: value, beside any of that name (Vary).
func (r *Response) Add(name, value string) { r.Header = append(r.Header, Field{name, value}) }

// Get returns the value of the header field name, "" when unset.
func (r *Response) Get(name string) string {
	for _, f := range r.Header {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// SetJSON makes r a JSON answer with its length, so a runtime can send it as a fixed-length
// body rather than chunked.
func (r *Response) SetJSON(status int, body []byte) {
	r.Set("Content-Type", "application/json; charset=utf-8")
	r.Set("Content-Length", strconv.Itoa(len(body)))
	r.Set("X-Content-Type-Options", "nosniff")
	r.Set("Cache-Control", "no-store")
	r.Status, r.Body = status, body
}

// ErrorResponse is the answer a host gives for its own errors around the API: {"error": msg}
// with status and the headers of every JSON answer, for any origin.
func ErrorResponse(status int, msg string) *Response {
	r := &Response{}
	r.Set("Access-Control-Allow-Origin", "*")
	r.SetJSON(status, ErrorBody(msg))
	return r
}

// ErrorBody is the error envelope of every answer other than 200, {"error": msg}.
func ErrorBody(msg string) []byte {
	return append(jsontext.AppendString([]byte(`{"error":`), msg), '}')
}
