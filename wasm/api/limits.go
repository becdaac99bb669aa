package api

import (
	"errors"
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
// The README's "Edge worker" section shows the same table.
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

// CheckRequest holds req to the limits on the query's length, k, seeds and the filter's lists;
// a zero k or seeds means the engine's default. The error names the field as the request's JSON
// does ("filter.allow[2]"). The engine checks the other fields, and the globs' syntax, when it
// answers.
func CheckRequest(req engine.Request) error {
	switch {
	case len(req.Query) > MaxQueryBytes:
		return errors.New(`api: field "query": ` + strconv.Itoa(len(req.Query)) + " bytes, at most " + strconv.Itoa(MaxQueryBytes))
	case req.K < 0 || req.K > MaxK:
		return errOutside("k", req.K, MaxK)
	case req.Seeds < 0 || req.Seeds > MaxSeeds:
		return errOutside("seeds", req.Seeds, MaxSeeds)
	}
	for l, v := range [...][]string{req.Filter.Allow, req.Filter.Deny, req.Filter.Namespaces} {
		field := `api: field "filter.` + filterLists[l]
		if len(v) > MaxFilterPatterns {
			return errors.New(field + `": ` + strconv.Itoa(len(v)) + " entries, at most " + strconv.Itoa(MaxFilterPatterns))
		}
		for i, p := range v {
			if len(p) > MaxPatternBytes {
				return errors.New(field + "[" + strconv.Itoa(i) + `]": ` + strconv.Itoa(len(p)) + " bytes, at most " + strconv.Itoa(MaxPatternBytes))
			}
		}
	}
	return nil
}

// filterLists names a filter's lists as the request's JSON and the GET parameters do.
var filterLists = [...]string{"allow", "deny", "namespaces"}

func errOutside(field string, v, hi int) error {
	return errors.New("api: field " + strconv.Quote(field) + ": " + strconv.Itoa(v) + " is outside [1, " + strconv.Itoa(hi) + "]")
}
