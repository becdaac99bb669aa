// Package service is what every caskg surface that answers requests shares, below its
// transport: the HTTP API (wasm/api), the MCP tool layer (wasm/mcpcore) with `caskg mcp`, the
// edge worker and the gateway, and the CLI. It holds the one table of limits a request is held
// to (Service, MaxK, ...; FieldError), the JSON Schema properties the tools publish from that
// table (Property), skills found by the names callers give and the closest names for an unknown
// one (Names), feedback reports and their rules (Feedback, CheckFeedback, FeedbackStore),
// who may report them (Tokens, FeedbackAuth), and the host-neutral request and response an
// HTTP-shaped host hands in and sends back (Request, Response). It builds for js/wasm and
// natively and imports no transport: not net/http, not the MCP SDK.
//
// Its errors say "service: ..." (a field out of its limits: `service: field "k": ...`); the
// transports pass them on as they are, next to their own ("api: ...", "engine: ...").
//
// For a Go program: the limits and checks a request to any caskg surface is held to, to check a
// request before sending it or to answer as caskg does over a transport of one's own.
package service
