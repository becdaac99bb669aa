package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceFixture is a downstream server with the fixtures the MCP conformance suite's
// server scenarios ask for by name (tools test_*, resources test://..., prompts test_*,
// completions, logging, subscriptions), written from the scenarios' requirements, served on
// 127.0.0.1 over streamable HTTP for the gateway to stand in front of. It speaks the
// session-based protocol versions, whose resources/subscribe the suite tests.
func conformanceFixture(t *testing.T) string {
	t.Helper()
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	versions := []string{}
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			versions = append(versions, v)
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "conformance-fixture", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: versions,
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-1", req.Params.Argument.Value + "-2"}, Total: 2}}, nil
		},
	})
	tool := func(name, desc string, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}, h)
	}
	tool("test_simple_text", "Answers with one text block.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "This is a simple text response for testing."}}}, nil
	})
	tool("test_image_content", "Answers with an image.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}, nil
	})
	tool("test_error_handling", "Always fails.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
	})
	tool("test_tool_with_logging", "Logs three messages while it runs.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Tool with logging executed successfully"}}}, nil
	})
	tool("test_tool_with_progress", "Reports progress 0, 50, 100.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for _, p := range []float64{0, 50, 100} {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "progress done"}}}, nil
	})
	tool("test_sampling", "Asks the client's model.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Test prompt for sampling"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("LLM response: %v", res.Content)}}}, nil
	})
	tool("test_elicitation", "Asks the user.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Please provide your information",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"username": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("User response: %s %v", res.Action, res.Content)}}}, nil
	})

	text := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of " + req.Params.URI}}}, nil
	}
	srv.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"}, text)
	srv.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: png}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MIMEType: "text/plain"}, text)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "Data by id", MIMEType: "text/plain"}, text)

	prompt := func(p *mcp.Prompt, h mcp.PromptHandler) { srv.AddPrompt(p, h) }
	msg := func(c mcp.Content) *mcp.GetPromptResult {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: c}}}
	}
	prompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return msg(&mcp.TextContent{Text: "This is a simple prompt for testing."}), nil
		})
	prompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return msg(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Params.Arguments["arg1"], req.Params.Arguments["arg2"])}), nil
		})
	prompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return msg(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}), nil
		})
	prompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return msg(&mcp.ImageContent{Data: png, MIMEType: "image/png"}), nil
		})

	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}
