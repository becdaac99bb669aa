package modbuild_test

import (
	"bytes"
	"fmt"

	"github.com/caskg/caskg/wasm/modbuild"
)

// Gzip is the size a module counts against the budget: compressed as a CDN serves it.
func ExampleGzip() {
	module := bytes.Repeat([]byte("\x00asm"), 10_000)
	fmt.Println(len(module), "bytes;", modbuild.Gzip(module) < len(module)/100, modbuild.Gzip(module) < modbuild.MaxGzip)
	// Output: 40000 bytes; true true
}
