package service

import (
	"strconv"

	"github.com/caskg/caskg/wasm/engine"
)

// The limits of a retrieval request (and of a feedback report): one table for every caskg surface that answers requests
// — `caskg query` (flags -k and --seeds, the task text, --batch), the MCP server's
// retrieve_skills, and this API in `caskg serve` and the edge worker. They are tighter than the
// engine's own bounds (engine.MaxK, engine.MaxQueryBytes), which only keep the core sound for
// any host: a service may answer strangers, and an agent wants a handful of skills, not a
// thousand. A request over a limit is refused with an error naming the field; nothing is cut.
// `caskg eval` and the WebAssembly module, which measure and embed the engine, keep its bounds.
//
//	limit          value     bounds
//	MaxK           100       results per request: -k, "k", k=
//	MaxSeeds       100       seed skills PPR starts from: --seeds, "seeds" (the engine's bound)
//	MaxQueryBytes  8 KiB     the task text, in bytes of UTF-8: the task argument, "query", q=
//	MaxBatch       10,000    tasks in one `caskg query --batch` run (read into memory first)
//	MaxBodyBytes   64 KiB    the body of a POST to the API; a request with a 1,024-dimension vector fits
//	MaxUsed        100       skill names in one feedback report: "used" (POST /v1/feedback, report_skill_use)
//	MaxFilterPatterns 100    entries in each list of a filter: "filter" {"allow", "deny", "namespaces"}, allow=, --allow
//	MaxPatternBytes   256    bytes of one filter entry (a glob or a namespace)
//
// docs/http-api.md's "Limits" shows the same table.
const (
	MaxK          = 100
	MaxSeeds      = engine.MaxSeeds
	MaxQueryBytes = 8 << 10
	MaxBatch      = 10_000
	MaxBodyBytes  = 64 << 10
	MaxUsed       = 100

	MaxFilterPatterns = 100
	MaxPatternBytes   = 256
)

// MaxNameBytes bounds a skill's name as the MCP tools take it ("name": get_skill,
// skill_neighbors); Names.Lookup holds names to it.
const MaxNameBytes = 512

// The table is within the engine's bounds (a negative constant converted to uint fails the
// build), so a request Service passes the engine takes: a caller holds a request to Service
// alone, never to the minimum of both.
const (
	_ = uint(engine.MaxK - MaxK)
	_ = uint(engine.MaxSeeds - MaxSeeds)
	_ = uint(engine.MaxQueryBytes - MaxQueryBytes)
	_ = uint(engine.MaxFilterPatterns - MaxFilterPatterns)
	_ = uint(engine.MaxPatternBytes - MaxPatternBytes)
)

// Limits bound the fields of a request a caller gives (engine.Limits). Service is the table
// every surface holds requests to; `caskg eval`, which measures the engine, keeps the engine's
// bound on k.
type Limits engine.Limits

// Service holds the limits of the table above.
var Service = Limits{K: MaxK, Seeds: MaxSeeds, QueryBytes: MaxQueryBytes, FilterPatterns: MaxFilterPatterns,
	PatternBytes: MaxPatternBytes}

// FieldError is a field of a request outside its limits, as engine.FieldError names it, in
// this package's words ("service: field ...").
type FieldError engine.FieldError

func (e *FieldError) Error() string {
	return "service: field " + strconv.Quote(e.Field) + ": " + e.Problem
}

// Check holds req to l with engine.Limits.Check, the one validation of a retrieval request,
// which every surface calls: nil or a *FieldError. given names the fields the caller wrote
// even as zero ("k", "seeds"). The engine checks the other fields, and the globs' syntax, when
// it answers.
func (l *Limits) Check(req engine.Request, given ...string) error {
	err := (*engine.Limits)(l).Check(req, given...)
	if fe, ok := err.(*engine.FieldError); ok {
		return (*FieldError)(fe)
	}
	return err
}

// Property is the JSON Schema property of the request field name, "query", "k" or a filter's
// list (any other name: "allow", "deny", "namespaces"), with the description desc and the
// limits Check holds the field to: the MCP tools' input schemas are written with it, so what
// clients see and what the surfaces check come from one table.
func Property(name, desc string) string {
	// A filter's list by default: one concatenation and one Itoa keep this small in the
	// edge worker, where every call costs bytes.
	head, n := `{"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": `+strconv.Itoa(Service.PatternBytes)+
		`}, "maxItems": `, Service.FilterPatterns
	switch name {
	case "query":
		head, n = `{"type": "string", "minLength": 1, "maxLength": `, Service.QueryBytes
	case "k":
		head, n = `{"type": "integer", "minimum": 1, "maximum": `, Service.K
	}
	return strconv.Quote(name) + ": " + head + strconv.Itoa(n) + `, "description": ` + strconv.Quote(desc) + "}"
}
