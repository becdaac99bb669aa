package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/ingest"
)

// Embedder kinds of --embedder.
const (
	embedderBuiltin = "builtin"
	embedderONNX    = "onnx"
	embedderHTTP    = "http"
	embedderNone    = "none"
)

// embedFlags are the build flags that choose and configure the embedder of the semantic
// channel.
type embedFlags struct {
	kind     string
	model    string
	ortLib   string
	url      string
	apiModel string
	threads  int
	batch    int
	cacheDir string // the build's -cache-dir: embeddings go to its embeddings/ folder; "off" disables
}

func (f *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.kind, "embedder", embedderBuiltin,
		"semantic model: builtin (LSA learned from the library, offline), onnx (a sentence-transformers ONNX export, --model), http (an OpenAI-compatible /v1/embeddings endpoint, --embed-url) or none")
	fs.StringVar(&f.model, "model", "", "onnx: model `folder` with model.onnx and tokenizer.json or vocab.txt")
	fs.StringVar(&f.ortLib, "ort-lib", "", "onnx: path of libonnxruntime (default $"+embed.LibraryEnv+", then "+embed.LocalLibrary+" from `make onnxruntime`)")
	fs.StringVar(&f.url, "embed-url", "", "http: base `URL` of the endpoint, e.g. http://127.0.0.1:8080/v1 (default $OPENAI_BASE_URL); key from $CASKG_LLM_API_KEY or $OPENAI_API_KEY")
	fs.StringVar(&f.apiModel, "embed-model", "", "http: model `name` sent to the endpoint")
	fs.IntVar(&f.threads, "embed-threads", 0, "onnx: intra-op threads (default: the number of CPUs)")
	fs.IntVar(&f.batch, "embed-batch", 0, fmt.Sprintf("texts per model call (default: onnx %d, http %d)", embed.DefaultONNXBatch, embed.DefaultHTTPBatch))
}

// embedder returns the embedder the flags ask for, nil for --embedder none. skills are the
// library the builtin model learns from, in any order: it learns from them sorted by name, as
// the artifact orders them. An onnx embedder holds a session: the caller closes it when it
// implements io.Closer.
func (f *embedFlags) embedder(skills []ingest.Skill) (embed.Embedder, error) {
	skills = slices.Clone(skills)
	slices.SortFunc(skills, func(a, b ingest.Skill) int { return strings.Compare(a.Name, b.Name) })
	if f.threads < 0 || f.batch < 0 {
		return nil, usagef("flags -embed-threads and -embed-batch must not be negative")
	}
	var e embed.Embedder
	switch f.kind {
	case embedderNone:
		return nil, nil
	case embedderBuiltin, "":
		return builder.BuiltinEmbedder(skills) // learning it costs less than reading a cache
	case embedderONNX:
		if f.model == "" {
			return nil, usagef("--embedder onnx needs --model DIR (a sentence-transformers ONNX export)")
		}
		m, err := embed.NewONNX(embed.ONNXOptions{Dir: f.model, Library: f.ortLib, Threads: f.threads, Batch: f.batch})
		if err != nil {
			return nil, err
		}
		e = m
	case embedderHTTP:
		url := f.url
		if url == "" {
			url = os.Getenv("OPENAI_BASE_URL")
		}
		if url == "" || f.apiModel == "" {
			return nil, usagef("--embedder http needs --embed-url URL (or $OPENAI_BASE_URL) and --embed-model NAME")
		}
		h, err := embed.NewHTTP(embed.HTTPOptions{URL: url, Model: f.apiModel, Batch: f.batch})
		if err != nil {
			return nil, err
		}
		e = h
	default:
		return nil, usagef("flag -embedder: %q is not builtin, onnx, http or none", f.kind)
	}
	if f.cacheDir == "off" {
		return e, nil
	}
	base, err := cacheBase(f.cacheDir)
	if err != nil {
		return e, nil // no cache folder on this system: embed without one
	}
	c, err := embed.Cached(e, filepath.Join(base, "embeddings"))
	if err != nil {
		return nil, err
	}
	return c, nil
}
