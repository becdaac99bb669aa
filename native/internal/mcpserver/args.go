package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/wasm/mcpcore"
)

// checkArgs is receiving middleware that checks a tools/call's arguments against the tool's
// input schema (mcpcore.CheckArgs, which the edge worker runs too) before the SDK decodes
// them, and answers bad ones with a tool error.
func checkArgs() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if err := mcpcore.CheckArgs(r.Params.Name, r.Params.Arguments); err != nil {
					res := &mcp.CallToolResult{}
					res.SetError(err)
					return res, nil
				}
			}
			return next(ctx, method, req)
		}
	}
}
