package embed_test

import (
	"context"
	"fmt"

	"github.com/caskg/caskg/native/internal/embed"
)

// The builtin model learns from the library itself and embeds any text over its vocabulary.
func ExampleNewBuiltin() {
	library := []string{
		"boil water: Boil water in a kettle on the stove.",
		"brew tea: Steep tea leaves in hot water.",
		"export csv: Export a data table to a CSV file.",
		"plot chart: Draw a chart of a data table.",
	}
	m, err := embed.NewBuiltin(library, embed.BuiltinOptions{Dim: 2})
	if err != nil {
		panic(err)
	}
	vecs, _ := m.Embed(context.Background(), []string{"hot tea", "a table of data"})
	dot := func(a, b []float32) float32 { return a[0]*b[0] + a[1]*b[1] }
	docs, _ := m.Embed(context.Background(), library)
	fmt.Println(m.Dim(), dot(vecs[0], docs[1]) > dot(vecs[0], docs[2]), dot(vecs[1], docs[2]) > dot(vecs[1], docs[1]))
	// Output: 2 true true
}
