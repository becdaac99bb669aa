package mcpcore

import (
	"strconv"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/wasm/engine"
)

// The structured results as JSON, written by hand for the worker, which links no
// encoding/json: the members in the order encoding/json writes the types of results.go, but
// graph_info's, whose keys are sorted as the Go SDK writes its text content. The parity tests
// (native/internal/mcpserver) compare each with what caskg mcp answers.

func appendRetrieve(b []byte, out *RetrieveOutput) []byte {
	b = jsontext.AppendString(append(b, `{"query":`...), out.Query)
	b = append(b, `,"results":[`...)
	for i, r := range out.Results {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"rank":`...), int64(r.Rank), 10)
		b = jsontext.AppendString(append(b, `,"name":`...), r.Name)
		b, _ = jsontext.AppendFloat(append(b, `,"score":`...), r.Score, 64)
		b, _ = jsontext.AppendFloat(append(b, `,"match":`...), r.Match, 64)
		if r.SeedRank > 0 {
			b = strconv.AppendInt(append(b, `,"seed_rank":`...), int64(r.SeedRank), 10)
		}
		if r.Graph {
			b = append(b, `,"graph":true`...)
		}
		b = jsontext.AppendString(append(b, `,"description":`...), r.Description)
		b = jsontext.AppendString(append(b, `,"source":`...), r.Source)
		if len(r.Via) > 0 {
			b = appendVia(append(b, `,"via":`...), r.Via)
		}
		if rc := r.Recalled; rc != nil {
			b = strconv.AppendInt(append(b, `,"recalled":{"runs":`...), int64(rc.Runs), 10)
			b = appendStrings(append(b, `,"terms":`...), rc.Terms)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b, _ = jsontext.AppendFloat(append(b, `,"match":`...), out.Match, 64)
	if out.Note != "" {
		b = jsontext.AppendString(append(b, `,"note":`...), out.Note)
	}
	return append(b, '}')
}

func appendVia(b []byte, via []engine.Via) []byte {
	b = append(b, '[')
	for j, v := range via {
		if j > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(append(b, `{"from":`...), v.From)
		b = jsontext.AppendString(append(b, `,"state":`...), v.State)
		b, _ = jsontext.AppendFloat(append(b, `,"weight":`...), float64(v.Weight), 32)
		b = jsontext.AppendString(append(b, `,"type":`...), v.Type)
		if v.Reverse {
			b = append(b, `,"reverse":true`...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendStrings writes a list of strings (nil as []: the schema takes both).
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for j, s := range ss {
		if j > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, s)
	}
	return append(b, ']')
}

func appendSkillText(b []byte, out *SkillText) []byte {
	b = jsontext.AppendString(append(b, `{"name":`...), out.Name)
	b = jsontext.AppendString(append(b, `,"source":`...), out.Source)
	b = strconv.AppendBool(append(b, `,"complete":`...), out.Complete)
	b = jsontext.AppendString(append(b, `,"text":`...), out.Text)
	if out.Note != "" {
		b = jsontext.AppendString(append(b, `,"note":`...), out.Note)
	}
	return append(b, '}')
}

func appendNeighbors(b []byte, out *NeighborsOutput) []byte {
	b = jsontext.AppendString(append(b, `{"name":`...), out.Name)
	for _, part := range []struct {
		key   string
		edges []Edge
	}{{"out", out.Out}, {"in", out.In}} {
		b = append(b, `,"`+part.key+`":[`...)
		for i, e := range part.edges {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(append(b, `{"skill":`...), e.Skill)
			b = jsontext.AppendString(append(b, `,"state":`...), e.State)
			b = jsontext.AppendString(append(b, `,"type":`...), e.Type)
			b, _ = jsontext.AppendFloat(append(b, `,"weight":`...), float64(e.Weight), 32)
			b, _ = jsontext.AppendFloat(append(b, `,"assoc":`...), float64(e.Assoc), 32)
			b = jsontext.AppendString(append(b, `,"evidence":`...), e.Evidence)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = strconv.AppendInt(append(b, `,"out_total":`...), int64(out.OutTotal), 10)
	b = strconv.AppendInt(append(b, `,"in_total":`...), int64(out.InTotal), 10)
	return append(b, '}')
}

func appendFeedback(b []byte, out *FeedbackOutput) []byte {
	b = strconv.AppendInt(append(b, `{"recorded":`...), int64(out.Recorded), 10)
	if out.Outcome != "" {
		b = jsontext.AppendString(append(b, `,"outcome":`...), out.Outcome)
	}
	return append(b, '}')
}

// appendInfo writes info with params, the artifact's build parameters as JSON ({} when they
// are not valid JSON), in place of info.Params; keys sorted.
func appendInfo(b []byte, info *Info, params []byte) []byte {
	b = append(b, '{')
	if info.Artifact != "" {
		b = jsontext.AppendString(append(b, `"artifact":`...), info.Artifact)
		b = append(b, ',')
	}
	b = appendCounts(append(b, `"by_state":`...), info.ByState, graphs.States())
	b = appendCounts(append(b, `,"by_type":`...), info.ByType, graphs.Relations())
	b = strconv.AppendInt(append(b, `,"bytes":`...), int64(info.Bytes), 10)
	b = strconv.AppendInt(append(b, `,"edges":`...), int64(info.Edges), 10)
	l := info.Learning
	b = strconv.AppendBool(append(b, `,"learning":{"cold":`...), l.Cold)
	b = strconv.AppendInt(append(b, `,"live_edges":`...), int64(l.Live), 10)
	b = jsontext.AppendString(append(b, `,"note":`...), l.Note)
	b = strconv.AppendInt(append(b, `,"runs":`...), int64(l.Runs), 10)
	b = append(b, '}')
	if lib := info.Library; lib != nil {
		b = jsontext.AppendString(append(b, `,"library":{"dir":`...), lib.Dir)
		b = strconv.AppendInt(append(b, `,"problems":`...), int64(lib.Problems), 10)
		b = strconv.AppendInt(append(b, `,"served":`...), int64(lib.Served), 10)
		b = strconv.AppendInt(append(b, `,"skills":`...), int64(lib.Skills), 10)
		b = append(b, '}')
	}
	if info.MemoryBytes > 0 {
		b = strconv.AppendInt(append(b, `,"memory_bytes":`...), int64(info.MemoryBytes), 10)
	}
	b = append(b, `,"params":`...)
	if len(params) > 0 && jsontext.Valid(params) {
		b = append(b, params...)
	} else {
		b = append(b, "{}"...)
	}
	b = strconv.AppendBool(append(b, `,"query_encoder":`...), info.QueryEncoder)
	b = strconv.AppendInt(append(b, `,"skills":`...), int64(info.Skills), 10)
	b = strconv.AppendInt(append(b, `,"terms":`...), int64(info.Terms), 10)
	if info.VectorDim > 0 {
		b = strconv.AppendInt(append(b, `,"vector_dim":`...), int64(info.VectorDim), 10)
	}
	if info.VectorModel != "" {
		b = jsontext.AppendString(append(b, `,"vector_model":`...), info.VectorModel)
	}
	b = jsontext.AppendString(append(b, `,"version":`...), info.Version)
	return append(b, '}')
}

// appendCounts writes counts keyed by the names of xs, sorted; edgeCounts gives every one.
func appendCounts[T interface{ String() string }](b []byte, counts map[string]int, xs []T) []byte {
	b = append(b, '{')
	for i, name := range sortedNames(xs) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(jsontext.AppendString(b, name), ':'), int64(counts[name]), 10)
	}
	return append(b, '}')
}
