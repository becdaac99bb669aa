package builder

import (
	"testing"

	"github.com/caskg/caskg/wasm/engine"
)

// TestReferent checks how an input's description names the skill its value comes from.
func TestReferent(t *testing.T) {
	names := []string{"FlightSearch", "SearchAirport", "Flights_SearchRoundtrip", "HotelSearchLocation", "RestaurantSearchLocation", "get_weather"}
	nameTokens := make([][]string, len(names))
	df := map[string]int{}
	for i, n := range names {
		for _, w := range engineTokens(n) {
			nameTokens[i] = append(nameTokens[i], w)
			df[w]++
		}
	}
	idf := map[string]float64{}
	for w, d := range df {
		idf[w] = 1 / float64(d)
	}
	tests := []struct {
		desc string
		self int
		want string
	}{
		{"The origin code can be extracted from the Search Airport API in the Flights collection.", 0, "SearchAirport"},
		{"An id returned by search_airport.", 0, "SearchAirport"},
		{"Retrieved from the Search Location API.", 0, ""}, // two names fit equally: no one
		{"The city to fly from.", 0, ""},                   // no source phrase
		{"Obtained from the weather service.", 0, ""},      // one shared word is not enough
		{"Extracted from the Search Airport API.", 1, ""},  // never itself
	}
	for _, tt := range tests {
		got := ""
		if j := referent(tt.desc, nameTokens, idf, tt.self); j >= 0 {
			got = names[j]
		}
		if got != tt.want {
			t.Errorf("referent(%q) = %q, want %q", tt.desc, got, tt.want)
		}
	}
}

func engineTokens(s string) []string { return engine.Tokenize(s) }
