package mcpcore

import (
	"strconv"
	"strings"

	"github.com/caskg/caskg/wasm/service"
)

// The tools of `caskg gateway`'s front, defined here with the skill tools so that every MCP
// front of caskg lists tools of this one layer: search_tools ranks the gateway's catalog of
// other servers' tools over the graph it learned, and call_tool runs one of them. The gateway
// (native/internal/gateway) runs them; unlike the skill tools, call_tool reaches the open world.
const (
	SearchTools = "search_tools"
	CallTool    = "call_tool"
)

// DefaultSearchK is how many tools search_tools returns when k is not given.
const DefaultSearchK = 8

// GatewayInstructions tell a client's model what the gateway is for.
const GatewayInstructions = `This gateway stands in front of many MCP servers. Their tools are not listed directly: ` +
	`call search_tools with the task in plain words to find the tools for it (with their input schemas and the tools ` +
	`they need or lead to), then call_tool with a tool's name and arguments to run it.`

// SearchToolsDef is search_tools as a front lists it, over tools tools of the servers named
// (none: "no servers yet"): its description names them, so that a model knows when to use it.
func SearchToolsDef(tools int, servers []string) Tool {
	names := "no servers yet"
	if len(servers) > 0 {
		names = "the servers " + strings.Join(servers, ", ")
	}
	return Tool{Name: SearchTools, Title: "Search tools",
		Description: "Find the tools for a task among " + strconv.Itoa(tools) + " tools of " + names + ". Returns the best " +
			"tools first, each with its description, full input schema and why it was found, and the chain the task needs " +
			"(prerequisites, follow-ups). Run a tool with call_tool.",
		InputSchema: searchToolsSchema, ReadOnly: true}
}

// searchToolsSchema is search_tools' input schema: the query, k and the filter, flat as
// retrieve_skills takes it.
var searchToolsSchema = `{"type": "object", "properties": {` +
	service.Property("query", "the task, in plain words") + `, ` +
	service.Property("k", "how many tools to return (default "+strconv.Itoa(DefaultSearchK)+")") + `, ` +
	service.Property("allow", "return only tools whose name (SERVER__TOOL) matches one of these globs ('*' any run of characters, '?' one character)") + `, ` +
	service.Property("deny", "never return tools whose name matches one of these globs (wins over allow)") + `, ` +
	service.Property("namespaces", "return only tools of these servers (the SERVER of SERVER__TOOL)") + `}, ` +
	`"required": ["query"], "additionalProperties": false}`

// CallToolDef is call_tool as a front lists it. It runs another server's tool: not read-only,
// and open-world.
var CallToolDef = Tool{Name: CallTool, Title: "Call a tool",
	Description: "Run a tool that search_tools found: its name (SERVER__TOOL) and its arguments as its input schema " +
		"describes them. Returns the tool's result as the tool gave it.",
	InputSchema: `{"type": "object", "properties": {` +
		`"name": {"type": "string", "minLength": 1, "description": "the tool's name as search_tools gave it, SERVER__TOOL"}, ` +
		`"arguments": {"type": "object", "description": "the tool's arguments"}}, ` +
		`"required": ["name"], "additionalProperties": false}`}
