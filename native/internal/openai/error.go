package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Error is a failed Post, described by its last attempt. Its message names the endpoint (any
// password in the URL redacted) and, for an HTTP answer, the status and the server's message;
// never the API key.
type Error struct {
	Endpoint string // the URL posted to, password redacted
	Status   int    // HTTP status of the last answer; 0 when none came (timeout, connection error, cancellation)
	Detail   string // the server's error message, or the start of its body, for a non-2xx answer
	Timeout  bool   // the last attempt got no answer within Config.Timeout
	Attempts int    // attempts made, the last one included

	msg      string
	err      error         // the cause: ctx.Err(), a transport or JSON error; nil for a status
	retry    bool          // worth another attempt
	after    time.Duration // the server's Retry-After, when hasAfter
	hasAfter bool
}

// Error returns "openai: " and the description, with the number of attempts when more than one.
func (e *Error) Error() string {
	if e.Attempts > 1 {
		return "openai: " + e.msg + " (after " + strconv.Itoa(e.Attempts) + " attempts)"
	}
	return "openai: " + e.msg
}

// Unwrap returns the cause: the context's error for a cancelled Post, the transport or JSON
// error, or nil for an HTTP status.
func (e *Error) Unwrap() error { return e.err }

// ErrorMessage returns the message of an OpenAI-style error, given either the whole body
// ({"error": {"message": ...}} or {"error": "..."}) or its "error" member alone; "" when there
// is none.
func ErrorMessage(data []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && len(body.Error) > 0 && string(body.Error) != "null" {
		data = body.Error
	}
	var s string
	if json.Unmarshal(data, &s) == nil {
		return Excerpt(s, 200)
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &obj) == nil {
		return Excerpt(obj.Message, 200)
	}
	return ""
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date, capped at
// MaxBackoff. ok is false when there is no usable value.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(MaxBackoff/time.Second) {
			return MaxBackoff, true
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), MaxBackoff), true
	}
	return 0, false
}

// Excerpt returns s with runs of white space collapsed, invalid UTF-8 replaced, cut to at most
// n runes (and "…" when cut): a server's text, fit to quote in an error.
func Excerpt(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), unicode.IsSpace), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
