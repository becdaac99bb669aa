package catalogserver_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/lab/catalogserver"
)

// BenchmarkListSealTools lists all 4,076 Seal-Tools tools through pagination (41 pages of
// 100), in process over the SDK's in-memory transport.
func BenchmarkListSealTools(b *testing.B) {
	cs := connect(b, devCatalog(b, "sealtools"), catalogserver.Options{})
	ctx := ctxT(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 4076 {
			b.Fatalf("%d tools", n)
		}
	}
}

// BenchmarkCall is one tools/call round trip on a Seal-Tools tool with an output schema.
func BenchmarkCall(b *testing.B) {
	c := devCatalog(b, "sealtools")
	cs := connect(b, c, catalogserver.Options{})
	ctx := ctxT(b)
	tl := c.Tools[0]
	params := &mcp.CallToolParams{Name: tl.Name, Arguments: catalogserver.ExampleArgs(tl.InputSchema)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkStartSealTools is what serving Seal-Tools costs before the first request: reading
// the 3.6 MB catalog and registering its 4,076 tools with the SDK.
func BenchmarkStartSealTools(b *testing.B) {
	devCatalog(b, "sealtools") // skip when the data is missing
	b.ReportAllocs()
	for b.Loop() {
		c, err := catalogserver.Load(sharedData + "/sealtools/tools.json")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := catalogserver.NewServer(c, catalogserver.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
