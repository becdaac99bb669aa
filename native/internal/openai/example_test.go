package openai_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/caskg/caskg/native/internal/openai"
)

func ExampleClient_Post() {
	// A stand-in for an OpenAI-compatible server (llama.cpp, vLLM, Ollama, a hosted API).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-example" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided"}}`)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"index":0,"embedding":[0.6,0.8]}]}`)
	}))
	defer srv.Close()

	type request struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	var answer struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	c, err := openai.New(openai.Config{URL: srv.URL + "/v1", Path: "embeddings", APIKey: "sk-example", Model: "m"})
	if err != nil {
		log.Fatal(err)
	}
	err = c.Post(context.Background(), request{Model: "m", Input: []string{"boil water"}}, &answer)
	fmt.Println(answer.Data[0].Embedding, err)

	wrong, _ := openai.New(openai.Config{URL: srv.URL + "/v1", Path: "embeddings", APIKey: "sk-wrong"})
	err = wrong.Post(context.Background(), request{Model: "m", Input: []string{"boil water"}}, &answer)
	var e *openai.Error
	fmt.Println(errors.As(err, &e), e.Status, e.Detail, e.Attempts)
	// Output:
	// [0.6 0.8] <nil>
	// true 401 Incorrect API key provided 1
}
