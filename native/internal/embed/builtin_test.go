package embed

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/caskg/caskg/wasm/engine"
)

var library = []string{
	"boil water: Boil water in a kettle on the stove until it bubbles.",
	"brew tea: Steep tea leaves in a cup of hot boiled water.",
	"fill kettle: Fill the kettle with water from the tap.",
	"heat food in microwave: Warm food or a drink in the microwave oven until hot.",
	"cool object in fridge: Chill a food item in the fridge until cold.",
	"slice bread: Cut bread into slices with a sharp knife on the board.",
	"sharpen knife: Sharpen a dull kitchen knife on the whetstone.",
	"send email report: Email the weekly report to the team as a PDF attachment.",
	"export table to csv: Export a data table to a CSV file.",
	"parse pdf tables: Extract tables from a PDF document into rows.",
	"plot chart: Draw a line chart of the data table and save it as an image.",
	"water plant: Water a dry plant in its pot with the watering can.",
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestBuiltin(t *testing.T) {
	m, err := NewBuiltin(library, BuiltinOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 8 {
		t.Fatalf("Dim() = %d, want 8", m.Dim())
	}
	ctx := context.Background()
	vecs, err := m.Embed(ctx, append(slices.Clone(library), "zzz qqq", ""))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs[:len(library)] {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("text %d: |v|² = %v, want 1", i, ss)
		}
	}
	for _, v := range vecs[len(library):] {
		if slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			t.Errorf("a text without known terms got %v, want the zero vector", v)
		}
	}
	// The latent space puts the tea-making skills together, away from the office skills.
	q, _ := m.Embed(ctx, []string{"make a hot cup of tea with boiling water"})
	tea, office := cosine(q[0], vecs[1]), cosine(q[0], vecs[7])
	if tea <= office+0.2 {
		t.Errorf("cos(tea query, brew tea) %.3f is not clearly above cos(tea query, email report) %.3f", tea, office)
	}

	// Embedding equals the query-encoder formula over the model's term table.
	terms, weights, tvecs := m.QueryEncoder()
	if !slices.IsSorted(terms) {
		t.Fatal("encoder terms not sorted")
	}
	text := "export the pdf table to csv, csv!"
	ts, ws := engine.QueryTerms(text)
	acc := make([]float64, m.Dim())
	for i, term := range ts {
		k, ok := slices.BinarySearch(terms, term)
		if !ok {
			continue
		}
		for d := range acc {
			acc[d] += ws[i] * float64(weights[k]) * float64(tvecs[k][d])
		}
	}
	got, _ := m.Embed(ctx, []string{text})
	want := make([]float32, len(acc))
	for d, x := range acc {
		want[d] = float32(x)
	}
	normalize(want)
	for d := range want {
		if math.Abs(float64(got[0][d]-want[d])) > 1e-5 {
			t.Fatalf("Embed %v, encoder formula %v", got[0], want)
		}
	}
}

func TestBuiltinDeterministic(t *testing.T) {
	a, err := NewBuiltin(library, BuiltinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(library)
	slices.Reverse(rev)
	b, err := NewBuiltin(rev, BuiltinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != b.ID() {
		t.Errorf("same texts in another order, different ids %q, %q", a.ID(), b.ID())
	}
	// The dimension is capped by the rank: 12 texts.
	if a.Dim() > len(library) {
		t.Errorf("Dim() = %d over %d texts", a.Dim(), len(library))
	}
	c, err := NewBuiltin(library[1:], BuiltinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() == a.ID() {
		t.Error("a different library gave the same model id")
	}
	if _, err := NewBuiltin(nil, BuiltinOptions{}); err == nil {
		t.Error("no texts accepted")
	}
	if _, err := NewBuiltin([]string{"a an the", ""}, BuiltinOptions{}); err == nil {
		t.Error("texts without terms accepted")
	}
	one, err := NewBuiltin([]string{"boil water"}, BuiltinOptions{})
	if err != nil || one.Dim() != 1 {
		t.Errorf("one text: %v, dim %d; want a 1-dimensional model", err, one.Dim())
	}
}
