package api_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/api"
)

// The Handler answers the routes under Prefix for one artifact; here the test kit's first two
// kitchen skills, encoded on the spot with the lexicon caskg build would give them.
func ExampleHandler_ServeHTTP() {
	h, err := api.New(testlib.Encode(&graphs.Artifact{Skills: testlib.Kitchen()[:2]}), api.Options{Version: "0.1.0"})
	if err != nil {
		log.Fatal(err)
	}
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", api.Prefix+"retrieve", strings.NewReader(`{"query":"fill the kettle","k":1}`)),
		httptest.NewRequest("GET", api.Prefix+"retrieve?q=kettle&k=1000", nil),
	} {
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	// Output:
	// 200 {"results":[{"name":"fill-kettle","score":1,"match":1,"seed_rank":1}],"match":1,"residual":1}
	// 400 {"error":"api: parameter \"k\": 1000 is outside [1, 100]"}
}
