package serve_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/serve"
	"github.com/caskg/caskg/native/testlib"
)

// writeKitchen writes the test kit's three-skill artifact, encoded on the spot with the lexicon
// caskg build would give it, into dir and returns its path.
func writeKitchen(dir string) string {
	path := filepath.Join(dir, "kitchen.skg")
	if err := os.WriteFile(path, testlib.Encode(&graphs.Artifact{Skills: testlib.Kitchen()}), 0o644); err != nil {
		panic(err)
	}
	return path
}

// A Go program serves an artifact as caskg serve does: the Server is an http.Handler, here
// with a checkout's playground and JS module rather than the copies make build embeds.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "serve-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	art := writeKitchen(dir)
	s, err := serve.New(serve.Options{Artifact: art, Playground: "../../playground", JS: "../../wasm/js", WASM: art, Version: "0.1.0"})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	for _, target := range []string{serve.APIPrefix + "retrieve?q=boil+water&k=1", serve.APIPrefix + "skills/boil-wter"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		body, _ := io.ReadAll(w.Body)
		fmt.Println(w.Code, string(body))
	}
	// Output:
	// 200 {"results":[{"name":"boil-water","score":1,"match":1,"seed_rank":1}],"match":1,"residual":1}
	// 404 {"error":"api: no skill named \"boil-wter\"; the closest names are: boil-water, brew-tea"}
}
