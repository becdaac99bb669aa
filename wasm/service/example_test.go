package service_test

import (
	"fmt"

	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// Every surface holds a request to the same limits before the engine answers it.
func ExampleLimits_Check() {
	fmt.Println(service.Service.Check(engine.Request{Query: "heat an egg", K: 8}))
	fmt.Println(service.Service.Check(engine.Request{Query: "heat an egg", K: 500}))
	// Output:
	// <nil>
	// service: field "k": 500 is outside [1, 100]
}
