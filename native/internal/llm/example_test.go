package llm_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/caskg/caskg/native/internal/llm"
)

func ExampleClient_ScoreAll() {
	// A stand-in for an OpenAI-compatible server (llama.cpp, vLLM, Ollama, a hosted API).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\"score\": 0.8}"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	dir, err := os.MkdirTemp("", "llm-cache")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := llm.ConfigFromEnv(srv.URL+"/v1", "qwen2.5-7b-instruct")
	cfg.CacheDir = dir
	c, err := llm.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	const system = `You judge skill dependencies. Answer only with JSON {"score": x}, x in [0,1].`
	probe := llm.Prompt{Kind: "removal", System: system,
		User: "Without skill A (fetch the page), is skill B (extract the table) impaired?"}
	reorder := llm.Prompt{Kind: "reorder", System: system,
		User: "Is running skill B (extract the table) before skill A (fetch the page) incoherent?"}
	for _, a := range c.ScoreAll(context.Background(), []llm.Prompt{probe, reorder}, nil) {
		fmt.Println(a.Score, a.Outcome, a.Err)
	}
	// Run again: the answer comes from the cache.
	fmt.Println(c.Cached(probe), c.Score(context.Background(), probe).Outcome)
	s := c.Stats()
	fmt.Println(s.Calls, s.Cached, s.Failed)
	// Output:
	// 0.8 fresh <nil>
	// 0.8 fresh <nil>
	// true cached
	// 2 1 0
}

func ExampleParseScore() {
	for _, text := range []string{
		"```json\n{\"score\": 0.85}\n```",
		"Removing it clearly breaks the target: 0.9.",
		"I'd say 70%",
		"score: 7",
		"I cannot tell.",
	} {
		fmt.Println(llm.ParseScore(text))
	}
	// Output:
	// 0.85 true
	// 0.9 true
	// 0.7 true
	// 0 false
	// 0 false
}
