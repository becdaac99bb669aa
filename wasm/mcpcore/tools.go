// Package mcpcore is caskg's MCP tool layer, defined and built once: the tools' names, titles,
// descriptions, input and output schemas and annotations, the server's instructions, the
// argument and result types (results.go), the argument checks (args.go), the texts the tools
// answer with (text.go) and Core, which runs the tools over an engine. The transports are thin:
// native/internal/mcpserver registers Core's tools with the official Go SDK for `caskg mcp` (stdio and
// HTTP); Handler serves them as stateless streamable-HTTP MCP (JSON responses) for the edge
// worker, which cannot link the SDK (it brings net/http), writing Core's results by hand
// (encode.go); the gateway's front (native/internal/gateway) lists its own two tools,
// search_tools and call_tool, from here too (gateway.go). The package imports neither net/http
// nor encoding/json.
//
// For a Go program: Tools and Core are caskg's MCP tools over an engine, to serve through an MCP
// library or transport of one's own with the same schemas, texts and results as caskg mcp.
package mcpcore

import (
	"strconv"

	"github.com/caskg/caskg/wasm/service"
)

// Tool is one tool's definition as tools/list gives it.
type Tool struct {
	Name, Title, Description string
	InputSchema              string // JSON Schema, as JSON text
	OutputSchema             string // of the structured content (outputs.go)
	// ReadOnly tools read the graph and the library and nothing else: read-only, idempotent.
	// Every tool is closed-world.
	ReadOnly bool
}

// Tool names.
const (
	Retrieve  = "retrieve_skills"
	GetSkill  = "get_skill"
	Neighbors = "skill_neighbors"
	GraphInfo = "graph_info"
	Report    = "report_skill_use"
)

// Name and Title of the server in initialize's serverInfo.
const (
	ServerName  = "caskg"
	ServerTitle = "caskg skill graph"
)

// Instructions tell a client's model what the server is for.
const Instructions = `caskg retrieves skills (procedures written as SKILL.md files) for a task from a skill graph. ` +
	`Before acting on a task, call retrieve_skills with the task in plain words: it returns the most relevant skills ` +
	`with their prerequisites and follow-ups found over the graph, and their text. Follow the steps of the skills it returns. ` +
	`Call get_skill for a skill's whole text when its text in the bundle was cut, skill_neighbors to see what a skill ` +
	`needs or enables, graph_info for what the graph holds.`

// Limits on arguments.
const (
	defaultNeighbors = 50   // edges listed per direction by skill_neighbors
	maxNeighbors     = 1000 // most edges per direction skill_neighbors lists
)

// Tools are the tools in the order tools/list gives them: by name, as the Go SDK lists them.
var Tools = []Tool{
	{GetSkill, "Get a skill's text",
		"The whole SKILL.md of a skill by name, read from the skill library; when the server has no library " +
			"or no file for the skill, the description and the head of the body stored in the graph.",
		nameSchema, getSkillOutput, true},
	{GraphInfo, "Skill graph info",
		"What the skill graph holds: skill, edge and term counts, edges by state and relation, format version, build parameters, vectors and the library folder.",
		`{"type": "object", "additionalProperties": false}`, graphInfoOutput, true},
	{Report, "Report skills used",
		"After a task, report which of the retrieved skills you actually used, in the order you used them, and " +
			"whether the task succeeded. The reports are kept as usage traces the skill graph is rebuilt from; " +
			"the server may have feedback off, and then says so.",
		feedbackSchema, reportOutput, false},
	{Retrieve, "Retrieve skills for a task",
		"Find the skills to use for a task: the best matches and, over the skill graph, the skills they need " +
			"or lead to. Returns the bundle as text (a header, then each skill's description, source file, graph evidence " +
			"and the head of its instructions, within a character budget) and the ranking as structured content.",
		retrieveSchema, retrieveOutput, true},
	{Neighbors, "Skill neighbors",
		"The published graph edges into and out of a skill: which skills it needs, which need it, which " +
			"follow it and which are similar or alternatives, with each edge's calibration state, weight and type.",
		neighborsSchema, neighborsOutput, true},
}

// retrieveSchema is retrieve_skills' input schema. The properties that carry the limits every
// surface shares (wasm/service) are written by service.Property from the table service.Service.Check holds
// requests to, so clients see the limits the handler enforces. JSON Schema counts a string's
// characters, so maxLength admits some text longer than service.MaxQueryBytes bytes; the handler
// refuses it, naming the field.
var retrieveSchema = `{
  "type": "object",
  "properties": {
    ` + service.Property("query", "the task, in plain words (at most "+strconv.Itoa(service.MaxQueryBytes)+" bytes of UTF-8)") + `,
    ` + service.Property("k", "how many skills to return (default 8)") + `,
    "render": {"type": "boolean", "description": "return the skills' text as the text content (default true); false gives a short list"},
    "skill_budget": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "characters of text per skill (default 2400)"},
    "total_budget": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "characters of text in all (default 12000)"},
    "no_graph": {"type": "boolean", "description": "rank by the task's words alone, without the graph"},
    "no_memory": {"type": "boolean", "description": "leave the memory of past tasks out of the ranking"},
    "min_score": {"type": "number", "minimum": 0, "maximum": 1, "description": "return only skills whose match (score times the answer's match strength) is at least this; 0.4 drops every weak answer"},
    ` + service.Property("allow", "return only skills whose name matches one of these globs ('*' any run of characters, '?' one character)") + `,
    ` + service.Property("deny", "never return skills whose name matches one of these globs (wins over allow)") + `,
    ` + service.Property("namespaces", `return only skills of these namespaces: the part of a name before its first "__" (SERVER__TOOL)`) + `
  },
  "required": ["query"],
  "additionalProperties": false
}`

// Input schemas of the other tools.
const (
	nameSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the skill's name, as retrieve_skills gives it"}
  },
  "required": ["name"],
  "additionalProperties": false
}`
	neighborsSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the skill's name, as retrieve_skills gives it"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "most edges to list each way, strongest first (default 50)"}
  },
  "required": ["name"],
  "additionalProperties": false
}`
)

// feedbackSchema is report_skill_use's input schema: the body of POST /v1/feedback, with its
// limits (wasm/service).
var feedbackSchema = `{
  "type": "object",
  "properties": {
    ` + service.Property("query", "the task the skills were retrieved for") + `,
    "used": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": ` + strconv.Itoa(service.MaxUsed) + `, "description": "the skills used, by name as retrieve_skills gave them, in the order used"},
    "outcome": {"type": "string", "enum": ["success", "failure"], "description": "whether the task succeeded (optional)"}
  },
  "required": ["query", "used"],
  "additionalProperties": false
}`

// lookup returns the tool called name.
func lookup(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
