package api_test

import (
	"log"
	"net/http"
	"os"

	"github.com/caskg/caskg/wasm/api"
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
