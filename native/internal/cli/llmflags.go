package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/llm"
)

// A Prober is a probe answerer that a program wrapping Run adds to the -prober choices of build
// and update: the lab's evaluation-only oracle (native/lab/cmd/caskg-lab). The caskg command
// adds none, so that no prober made for measuring ships in it.
type Prober struct {
	// Name is the -prober value; Usage follows it in the flag's help.
	Name, Usage string
	// Register adds the prober's flags to fs, each of which needs -prober Name, and returns
	// what sets opt.Prober (and the budget it wants) from them once fs is parsed. An error of
	// configure that wraps cmdline.ErrUsage is a usage error.
	Register func(fs *flag.FlagSet) (configure func(opt *builder.Options) error)
}

// probers are the probers added by AddProber, in order.
var probers []Prober

// AddProber adds p to the -prober choices of build and update. It is for a program's main,
// before Run; it is not safe to call while a command runs.
func AddProber(p Prober) { probers = append(probers, p) }

// llmFlags configure the probers: the offline contract prober, an OpenAI-compatible model for
// the probes and the judge channel, or one added by AddProber.
type llmFlags struct {
	prober, url, model, cacheDir string
	temperature                  float64
	concurrency, rpm, retries    int
	timeout                      time.Duration
	judge, dryRun                bool
	fs                           *flag.FlagSet       // to tell flags given on the command line from defaults
	added                        map[string][]string // the flags of each added prober, by its name
	configureAdded               map[string]func(*builder.Options) error
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	choices := []string{"contract (offline)", "llm"}
	for _, p := range probers {
		choices = append(choices, p.Name+" "+p.Usage)
	}
	fs.StringVar(&f.prober, "prober", "", "probe answerer: "+orList(choices)+" (default: llm when an LLM endpoint is configured, else contract)")
	fs.StringVar(&f.url, "llm-url", "", "OpenAI-compatible base `URL` (default $OPENAI_BASE_URL); key from $CASKG_LLM_API_KEY or $OPENAI_API_KEY")
	fs.StringVar(&f.model, "llm-model", "", "chat `model` name for the llm prober and judge")
	fs.Float64Var(&f.temperature, "llm-temperature", 0, "sampling temperature")
	fs.IntVar(&f.concurrency, "llm-concurrency", 4, "requests in flight")
	fs.IntVar(&f.rpm, "llm-rpm", 0, "requests per minute limit (0: none)")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "timeout of one request")
	fs.IntVar(&f.retries, "llm-retries", 4, "retries on 429, 5xx and timeouts, with backoff")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "cache `dir` of LLM answers (llm/) and embeddings (embeddings/); default: the user cache dir/caskg; \"off\" disables the embedding cache")
	fs.BoolVar(&f.judge, "judge", true, "with an LLM, also score gated candidates with the judge channel")
	fs.BoolVar(&f.dryRun, "dry-run", false, "count the probes and model calls a build would make, build nothing")
	f.fs, f.added, f.configureAdded = fs, map[string][]string{}, map[string]func(*builder.Options) error{}
	for _, p := range probers {
		before := map[string]bool{}
		fs.VisitAll(func(fl *flag.Flag) { before[fl.Name] = true })
		f.configureAdded[p.Name] = p.Register(fs)
		fs.VisitAll(func(fl *flag.Flag) {
			if !before[fl.Name] {
				f.added[p.Name] = append(f.added[p.Name], fl.Name)
			}
		})
	}
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// configure sets the prober and judge of opt from the flags and the environment.
func (f *llmFlags) configure(opt *builder.Options) error {
	cfg := llm.ConfigFromEnv(f.url, f.model)
	prober := f.prober
	if prober == "" {
		prober = "contract"
		if cfg.URL != "" && cfg.Model != "" {
			prober = "llm"
		}
	}
	names := []string{"contract", "llm"}
	for _, p := range probers {
		names = append(names, p.Name)
	}
	var given error
	f.fs.Visit(func(fl *flag.Flag) {
		for name, flags := range f.added {
			if given == nil && name != prober && slices.Contains(flags, fl.Name) {
				given = usagef("flag -%s needs -prober %s", fl.Name, name)
			}
		}
	})
	switch {
	case given != nil:
		return given
	case f.configureAdded[prober] != nil:
		return f.configureAdded[prober](opt)
	case prober == "contract":
		return nil
	case prober != "llm":
		return usagef("flag -prober: %q is not %s", f.prober, orList(names))
	}
	if cfg.URL == "" || cfg.Model == "" {
		return usagef("the llm prober needs -llm-url (or $OPENAI_BASE_URL) and -llm-model")
	}
	if f.cacheDir == "off" {
		return usagef("the llm prober needs its answer cache; -cache-dir off is for embeddings only")
	}
	dir, err := cacheBase(f.cacheDir)
	if err != nil {
		return err
	}
	cfg.CacheDir = filepath.Join(dir, "llm")
	cfg.Temperature, cfg.Concurrency, cfg.RPM = f.temperature, f.concurrency, f.rpm
	cfg.Timeout, cfg.Retries = f.timeout, f.retries
	client, err := llm.New(cfg)
	if err != nil {
		return err
	}
	p := &builder.LLMProber{Client: client, Progress: opt.Progress}
	opt.Prober = p
	if f.judge && opt.Variant != builder.VariantNoJudge {
		opt.Judge = p
	}
	return nil
}

// cacheBase is the folder of the build's caches: dir, or the user cache dir/caskg.
func cacheBase(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache dir (%v); give -cache-dir", err)
	}
	return filepath.Join(base, "caskg"), nil
}

// progressBars draws one bar per build stage on w when w is a terminal.
type progressBars struct {
	mu    sync.Mutex
	w     io.Writer
	stage string
	bar   *progressbar.ProgressBar
}

// newProgress returns a progress callback for build stages, or nil when w is not a terminal.
func newProgress(w io.Writer) func(stage string, done, total int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	p := &progressBars{w: w}
	return p.update
}

func (p *progressBars) update(stage string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stage != p.stage || p.bar == nil {
		if p.bar != nil {
			p.bar.Finish()
		}
		p.stage = stage
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%-10s", stage)), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	p.bar.Set(done)
	if done >= total {
		p.bar.Finish()
		p.bar = nil
		p.stage = ""
	}
}
