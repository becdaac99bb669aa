package learn

import (
	"encoding/json"
	"fmt"
	"time"
)

// meta is the sidecar graph.skg.meta: which catalog the graph was built from, so that a
// restart with the same catalog does not rebuild, and how many traces it learned. It names the
// graph by its SHA-256: after a kill between writing a graph and its sidecar, the sidecar of
// another graph is recognized and ignored (and the catalog taken as unknown: a full build).
// The build state cannot say it: it keeps the parsed skills, whose source path depends on how
// the directory was spelled, not the catalog's bytes.
type meta struct {
	Graph   string    // hex SHA-256 of graph.skg
	Catalog string    // hex SHA-256 of the catalog it was built from
	Traces  int       // the first Traces traces (of the rotated files, then traces.jsonl)
	Built   time.Time // when it was built, UTC, whole seconds
}

const metaVersion = 1

type metaJSON struct {
	Version int    `json:"version"`
	Graph   string `json:"graph_sha256"`
	Catalog string `json:"catalog_sha256"`
	Traces  int    `json:"traces"`
	Built   string `json:"built"`
}

func encodeMeta(m meta) []byte {
	b, _ := json.MarshalIndent(metaJSON{metaVersion, m.Graph, m.Catalog, m.Traces, m.Built.UTC().Format(time.RFC3339)}, "", "  ")
	return append(b, '\n')
}

func decodeMeta(data []byte) (meta, error) {
	var j metaJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return meta{}, fmt.Errorf("learn: graph meta: %w", err)
	}
	if j.Version != metaVersion {
		return meta{}, fmt.Errorf("learn: graph meta: version %d, this caskg reads %d", j.Version, metaVersion)
	}
	for _, f := range []struct{ name, v string }{{"graph_sha256", j.Graph}, {"catalog_sha256", j.Catalog}} {
		if !isSHA256(f.v) {
			return meta{}, fmt.Errorf("learn: graph meta: field %q: %q is not a hex SHA-256", f.name, f.v)
		}
	}
	if j.Traces < 0 {
		return meta{}, fmt.Errorf("learn: graph meta: field \"traces\": %d is negative", j.Traces)
	}
	built, err := time.Parse(time.RFC3339, j.Built)
	if err != nil {
		return meta{}, fmt.Errorf("learn: graph meta: field \"built\": %w", err)
	}
	return meta{Graph: j.Graph, Catalog: j.Catalog, Traces: j.Traces, Built: built.UTC()}, nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
