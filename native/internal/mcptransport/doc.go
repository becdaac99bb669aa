// Package mcptransport carries an MCP server (the SDK's mcp.Server) to its clients, for
// `caskg mcp` (native/internal/mcpserver's tools) and the gateway's front alike: Transport, newline-
// delimited JSON-RPC over a reader and a writer (stdio) that answers a malformed line instead
// of ending the session, and HTTPHandler and ServeHTTP, streamable HTTP that a DNS-rebinding
// page or another origin cannot reach, with IsLoopbackAddr for the listener's side of that
// rule. It knows nothing of the tools it carries.
//
// Its errors say "mcptransport: ...".
package mcptransport
