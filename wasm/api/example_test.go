package api_test

import (
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// A host decodes the artifact once and passes the API every request under its prefix.
func ExampleNew() {
	data, err := os.ReadFile("bin/sample.skg")
	if err != nil {
		log.Fatal(err)
	}
	h, err := api.New(data, api.Options{Version: "0.1.0"})
	if err != nil {
		log.Fatalf("bin/sample.skg: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(api.Prefix, h)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// Every surface holds a request to the same limits before the engine answers it.
func ExampleLimits_Check() {
	fmt.Println(api.Service.Check(engine.Request{Query: "heat an egg", K: 8}))
	fmt.Println(api.Service.Check(engine.Request{Query: "heat an egg", K: 500}))
	// Output:
	// <nil>
	// api: field "k": 500 is outside [1, 100]
}
