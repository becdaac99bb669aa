package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// maxBody bounds how much of a response is read; a chat completion of a few tokens is tiny.
const maxBody = 1 << 20

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest deliberately has no response_format: many compatible servers reject it.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"` // a string, or an array of {"type","text"} parts
		} `json:"message"`
		Text string `json:"text"` // legacy completions servers
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// attemptError is the failure of one HTTP attempt.
type attemptError struct {
	err        error
	retry      bool          // worth another attempt
	retryAfter time.Duration // the server's Retry-After, when hasAfter
	hasAfter   bool
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// complete returns the model's text for p, retrying transient failures.
func (c *Client) complete(ctx context.Context, p Prompt) (string, error) {
	req := chatRequest{Model: c.cfg.Model, Temperature: c.cfg.Temperature, MaxTokens: c.cfg.MaxTokens}
	if p.System != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: p.System})
	}
	req.Messages = append(req.Messages, chatMessage{Role: "user", Content: p.User})
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("llm: encoding request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		text, aerr := c.attempt(ctx, body)
		if aerr == nil {
			return text, nil
		}
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("llm: %w", err)
		}
		if !aerr.retry || attempt >= c.cfg.Retries {
			if attempt == 0 {
				return "", aerr.err
			}
			return "", fmt.Errorf("%w (after %d attempts)", aerr.err, attempt+1)
		}
		c.retries.Add(1)
		if err := sleepCtx(ctx, c.backoff(attempt, aerr)); err != nil {
			return "", fmt.Errorf("llm: %w", err)
		}
	}
}

// backoff is the wait before retry number attempt+1: the server's Retry-After when given,
// else BaseBackoff·2^attempt with "equal jitter" (half fixed, half random), capped at MaxBackoff.
func (c *Client) backoff(attempt int, aerr *attemptError) time.Duration {
	if aerr.hasAfter {
		return min(aerr.retryAfter, MaxBackoff)
	}
	d := MaxBackoff
	if attempt < 32 {
		d = min(c.cfg.BaseBackoff<<attempt, MaxBackoff)
		if d <= 0 { // overflow
			d = MaxBackoff
		}
	}
	half := d / 2
	c.rngMu.Lock()
	j := time.Duration(c.rng.Int64N(int64(half) + 1))
	c.rngMu.Unlock()
	return d - half + j
}

// attempt makes one HTTP request, holding a concurrency token and a rate-limiter slot.
func (c *Client) attempt(ctx context.Context, body []byte) (string, *attemptError) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return "", &attemptError{err: ctx.Err()}
	}
	defer func() { <-c.sem }()
	if c.lim != nil {
		if err := c.lim.wait(ctx); err != nil {
			return "", &attemptError{err: err}
		}
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", &attemptError{err: fmt.Errorf("llm: building request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", c.transportError(ctx, actx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", c.transportError(ctx, actx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", c.statusError(resp, data)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return "", &attemptError{err: fmt.Errorf("llm: %s answered HTTP %d with a body that is not chat-completion JSON: %q",
			c.endpoint, resp.StatusCode, excerpt(string(data), 200))}
	}
	if len(cr.Choices) == 0 {
		msg := "no choices"
		if e := errorMessage(cr.Error); e != "" {
			msg = "no choices, error " + strconv.Quote(excerpt(e, 200))
		}
		return "", &attemptError{err: fmt.Errorf("llm: %s answered with %s", c.endpoint, msg)}
	}
	ch := cr.Choices[0]
	if text, ok := contentText(ch.Message.Content); ok {
		return text, nil
	}
	return ch.Text, nil
}

// transportError classifies a failed round trip: the caller's cancellation ends the retries,
// a timeout or a connection error is retried.
func (c *Client) transportError(ctx, actx context.Context, err error) *attemptError {
	if ctx.Err() != nil {
		return &attemptError{err: ctx.Err()}
	}
	var ne net.Error
	if errors.Is(actx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &attemptError{retry: true,
			err: fmt.Errorf("llm: no answer from %s within %v (Config.Timeout)", c.endpoint, c.cfg.Timeout)}
	}
	return &attemptError{retry: true, err: fmt.Errorf("llm: request to %s failed: %w", c.endpoint, unwrapURL(err))}
}

// unwrapURL drops net/http's `Post "url":` wrapper; the message names the URL already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError describes a non-2xx response; 429 and 5xx are retried.
func (c *Client) statusError(resp *http.Response, data []byte) *attemptError {
	code := resp.StatusCode
	e := &attemptError{retry: code == http.StatusTooManyRequests || (code >= 500 && code <= 599)}
	detail := errorMessage(extractError(data))
	if detail == "" {
		detail = string(data)
	}
	msg := fmt.Sprintf("llm: %s answered HTTP %d %s", c.endpoint, code, http.StatusText(code))
	if d := excerpt(detail, 200); d != "" {
		msg += ": " + strconv.Quote(d)
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += "; check the API key (set CASKG_LLM_API_KEY or OPENAI_API_KEY)"
	case http.StatusNotFound:
		msg += "; check the base URL (it should end in /v1 for most servers) and the model name " + strconv.Quote(c.cfg.Model)
	}
	e.err = errors.New(msg)
	if e.retry {
		e.retryAfter, e.hasAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return e
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
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
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// contentText reads a message content: a JSON string, or an array of parts whose "text" fields
// are concatenated.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String(), true
	}
	return "", false
}

// extractError returns the "error" member of a JSON error body, if any.
func extractError(data []byte) json.RawMessage {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		return nil
	}
	return body.Error
}

// errorMessage reads an OpenAI-style error: {"message": ...} or a bare string.
func errorMessage(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Message
	}
	return ""
}

// excerpt returns s with runs of white space collapsed, invalid UTF-8 replaced, cut to at most
// n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), unicode.IsSpace), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
