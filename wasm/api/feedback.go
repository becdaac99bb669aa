package api

import (
	"errors"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/service"
)

// decodeFeedback decodes the feedback JSON b: {"query", "used", "outcome"} and nothing else,
// one JSON value. Errors are jsontext's, naming the byte offset and the field; the rules on the
// values are CheckFeedback's.
func decodeFeedback(b []byte) (service.Feedback, error) {
	var fb service.Feedback
	d := jsontext.NewDecoder(b)
	// orNull reads a string member into dst, leaving it empty for null.
	orNull := func(dst *string) (err error) {
		if !d.Null() {
			*dst, err = d.String()
		}
		return err
	}
	err := d.Object(func(key string) error {
		switch key {
		case "query":
			return orNull(&fb.Query)
		case "outcome":
			return orNull(&fb.Outcome)
		case "used":
			fb.Used = nil
			// The body's bound (MaxBodyBytes) bounds the names; CheckFeedback holds them to MaxUsed.
			return d.Array(func(int) error {
				name, err := d.String()
				fb.Used = append(fb.Used, name)
				return err
			})
		}
		return d.UnknownField()
	})
	if err != nil {
		return fb, err
	}
	return fb, d.End()
}

// feedback answers POST /v1/feedback: 501 without a store, 401 (with WWW-Authenticate) or 403
// for a sender Options.Reporters refuses, 415 for a body not declared application/json (see
// CORS in the package comment), 400 for a report CheckFeedback refuses, 429 when the store is
// rate limited, {"status":"recorded"} once the store took it, with the reporter as its Source.
func (h *Handler) feedback(w *service.Response, r *service.Request) ([]byte, error) {
	if h.store == nil {
		return nil, fail(statusNotImplemented, "feedback is not configured on this server: it records no reports "+
			"(caskg serve records them with --feedback FILE)")
	}
	source, err := h.reporters.Check(r.HeaderValue("Authorization"))
	if err != nil {
		ae := err.(*service.AuthError)
		if ae.Challenge != "" {
			w.Set("WWW-Authenticate", ae.Challenge)
		}
		return nil, &httpError{ae.Status, ae.Error()}
	}
	if ct, _, _ := strings.Cut(r.HeaderValue("Content-Type"), ";"); !strings.EqualFold(strings.TrimSpace(ct), "application/json") {
		return nil, fail(statusUnsupportedMediaType, "Content-Type "+strconv.Quote(service.Echo(ct))+": feedback takes application/json")
	}
	b, err := readBytes(r, `{"query": "heat an egg", "used": ["heat-object-in-microwave"], "outcome": "success"}`)
	if err != nil {
		return nil, err
	}
	fb, err := decodeFeedback(b)
	if err != nil {
		return nil, fail(statusBadRequest, "body: "+err.Error())
	}
	if err := service.CheckFeedback(fb, h.isSkill); err != nil {
		return nil, err
	}
	fb.Source = source
	if err := h.store.Append(r.Ctx(), fb); err != nil {
		var rl *service.RateLimitError
		if errors.As(err, &rl) {
			w.Set("Retry-After", strconv.Itoa(rl.Seconds()))
			return nil, fail(statusTooManyRequests, rl.Error())
		}
		return nil, fail(statusInternalServerError, "feedback not recorded: "+err.Error())
	}
	return []byte(`{"status":"recorded"}`), nil
}

// isSkill reports whether name is a skill of the handler's artifact.
func (h *Handler) isSkill(name string) bool {
	_, ok := h.byName[name]
	return ok
}
