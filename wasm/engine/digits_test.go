package engine_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// TestViaWeightDigits checks that an edge's weight, stored as a float32, reads in JSON with
// its own digits (0.8), not the float64 expansion of the float32 (0.800000011920929).
func TestViaWeightDigits(t *testing.T) {
	e := engineOf(t, testlib.Sample(t))
	resp, err := e.Query(engine.Request{Query: "heat some egg and put it in the garbage can", K: 20})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	weights := regexp.MustCompile(`"weight":([0-9.e-]+)`).FindAllStringSubmatch(string(b), -1)
	if len(weights) == 0 {
		t.Fatalf("no via weights in %s", b)
	}
	for _, w := range weights {
		f, _ := strconv.ParseFloat(w[1], 64)
		if want := strconv.FormatFloat(f, 'g', -1, 32); w[1] != want {
			t.Errorf("weight %s, want %s", w[1], want)
		}
	}
}
