package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestLimitsCheck(t *testing.T) {
	small := Limits{K: 10, Seeds: 5, QueryBytes: 8, FilterPatterns: 2, PatternBytes: 4}
	tests := []struct {
		name   string
		limits Limits
		req    Request
		given  []string
		want   string // "" for nil
	}{
		{"defaults", Bounds, Request{Query: "egg"}, nil, ""},
		{"at the bounds", Bounds, Request{Query: strings.Repeat("q", MaxQueryBytes), K: MaxK, Seeds: MaxSeeds}, nil, ""},
		{"k over the bound", Bounds, Request{Query: "egg", K: MaxK + 1}, nil, `engine: field "k": 1001 is outside [1, 1000]`},
		{"k over a service's limit", small, Request{Query: "egg", K: 11}, nil, `engine: field "k": 11 is outside [1, 10]`},
		{"k negative", small, Request{K: -1}, nil, `engine: field "k": -1 is outside [1, 10]`},
		{"k zero is the default", small, Request{K: 0}, nil, ""},
		{"k zero given", small, Request{K: 0}, []string{"k"}, `engine: field "k": 0 is outside [1, 10]`},
		{"seeds zero given", small, Request{K: 3}, []string{"k", "seeds"}, `engine: field "seeds": 0 is outside [1, 5]`},
		{"seeds over", small, Request{Seeds: 6}, nil, `engine: field "seeds": 6 is outside [1, 5]`},
		{"query over", small, Request{Query: "123456789"}, nil, `engine: field "query": 9 bytes, at most 8`},
		{"query first", small, Request{Query: "123456789", K: 99}, nil, `engine: field "query": 9 bytes`},
		{"too many entries", small, Request{Filter: Filter{Namespaces: []string{"a", "b", "c"}}}, nil, `engine: field "filter.namespaces": 3 entries, at most 2`},
		{"entry too long", small, Request{Filter: Filter{Deny: []string{"a*", "abcde"}}}, nil, `engine: field "filter.deny[1]": 5 bytes, at most 4`},
		{"syntax is not a limit", small, Request{Filter: Filter{Allow: []string{""}}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limits.Check(tt.req, tt.given...)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %#v, want a *FieldError starting %q", err, tt.want)
			}
		})
	}
}

// TestQueryHoldsToBounds: Query refuses what Bounds.Check refuses, with the same error.
func TestQueryHoldsToBounds(t *testing.T) {
	e := kitchen()
	for _, req := range []Request{
		{Query: "boil water", K: MaxK + 1},
		{Query: "boil water", Seeds: -3},
		{Query: strings.Repeat("w", MaxQueryBytes+1)},
		{Query: "boil water", Filter: Filter{Allow: make([]string, MaxFilterPatterns+1)}},
	} {
		want := Bounds.Check(req)
		if _, err := e.Query(req); err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("Query: error %v; Bounds.Check: %v; want the same error", err, want)
		}
	}
}
