package host_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
)

func ExampleLoad() {
	ctx := context.Background()
	wasm, err := os.ReadFile(wasmPath) // bin/caskg.wasm, from make wasm
	if err != nil {
		log.Fatal(err)
	}
	artifact := sampleFixture().artifact // bin/sample.skg, from caskg build graphs/sample

	// Compiled code is kept under the user's cache directory by default (Options.CacheDir,
	// NoCache); Cache shares one cache between the modules of a process.
	p, err := host.Load(ctx, wasm, artifact, &host.Options{Instances: 2, Cache: sharedCache()})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	resp, err := p.Query(ctx, engine.Request{Query: "heat some egg and put it in the garbage can", K: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Info().Skills, "skills;", len(resp.Results), "results, best first")
	// Output: 96 skills; 3 results, best first
}
