package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/internal/openai"
)

// chatPath is the endpoint under the base URL.
const chatPath = "chat/completions"

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

// complete returns the model's text for p; the transport retries transient failures.
func (c *Client) complete(ctx context.Context, p Prompt) (string, error) {
	req := chatRequest{Model: c.cfg.Model, Temperature: c.cfg.Temperature, MaxTokens: c.cfg.MaxTokens}
	if p.System != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: p.System})
	}
	req.Messages = append(req.Messages, chatMessage{Role: "user", Content: p.User})
	var cr chatResponse
	if err := c.tr.Post(ctx, req, &cr); err != nil {
		if oe, ok := errors.AsType[*openai.Error](err); ok && oe.Timeout {
			return "", fmt.Errorf("llm: %w; raise Config.Timeout (-llm-timeout)", err)
		}
		return "", fmt.Errorf("llm: %w", err)
	}
	if len(cr.Choices) == 0 {
		msg := "no choices"
		if e := openai.ErrorMessage(cr.Error); e != "" {
			msg = "no choices, error " + strconv.Quote(e)
		}
		return "", fmt.Errorf("llm: %s answered with %s", c.tr.Redacted(), msg)
	}
	ch := cr.Choices[0]
	if text, ok := contentText(ch.Message.Content); ok {
		return text, nil
	}
	return ch.Text, nil
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
