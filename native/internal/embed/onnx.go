package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Library locations of ONNX Runtime (yalue/onnxruntime_go needs ≥ 1.24).
const (
	// LibraryEnv names the environment variable consulted after the --ort-lib flag.
	LibraryEnv = "ONNXRUNTIME_SHARED_LIBRARY_PATH"
	// LocalLibrary is where `make onnxruntime` installs the library, relative to the project
	// root (from the npm package onnxruntime-node 1.24.1).
	LocalLibrary = ".cache/onnxruntime/libonnxruntime.so.1"
)

// Defaults of ONNXOptions.
const (
	DefaultONNXBatch = 32
	PoolingMean      = "mean"
	PoolingCLS       = "cls"
)

// ONNXOptions configure NewONNX. Zero values take the defaults.
type ONNXOptions struct {
	Dir     string // model folder: model.onnx (or onnx/model.onnx) and tokenizer.json or vocab.txt; required
	Library string // path of libonnxruntime; default: $ONNXRUNTIME_SHARED_LIBRARY_PATH, then LocalLibrary
	Threads int    // intra-op threads; default the number of CPUs
	Batch   int    // texts per run; default DefaultONNXBatch
	MaxLen  int    // most tokens per text, specials included; default from the model folder
	Pooling string // PoolingMean or PoolingCLS; default from 1_Pooling/config.json, else mean
}

// ResolveLibrary returns the ONNX Runtime library to load: flag when set, else
// $ONNXRUNTIME_SHARED_LIBRARY_PATH, else LocalLibrary found in the working directory or one of
// its parents, or beside the executable's folder. The error names all three.
func ResolveLibrary(flag string) (string, error) {
	exists := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && !st.IsDir()
	}
	if flag != "" {
		if !exists(flag) {
			return "", fmt.Errorf("embed: --ort-lib %s: no such file", flag)
		}
		return flag, nil
	}
	if env := os.Getenv(LibraryEnv); env != "" {
		if !exists(env) {
			return "", fmt.Errorf("embed: $%s=%s: no such file", LibraryEnv, env)
		}
		return env, nil
	}
	var tried []string
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, LocalLibrary)
			if exists(p) {
				return p, nil
			}
			tried = append(tried, p)
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(filepath.Dir(exe)), LocalLibrary)
		if exists(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("embed: ONNX Runtime library not found: no --ort-lib flag, no $%s, and no %s in the working "+
		"directory, its parents or beside the executable (run `make onnxruntime` in the caskg checkout, or "+
		"install ONNX Runtime ≥ 1.24 and pass --ort-lib PATH/libonnxruntime.so); looked at %s",
		LibraryEnv, LocalLibrary, strings.Join(firstN(tried, 3), ", "))
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// modelFiles locates a model folder's ONNX file and reads its pooling configuration.
func modelFiles(opt *ONNXOptions) (model string, err error) {
	if opt.Dir == "" {
		return "", errors.New("embed: the onnx embedder needs a model folder (--model DIR)")
	}
	for _, p := range []string{filepath.Join(opt.Dir, "model.onnx"), filepath.Join(opt.Dir, "onnx", "model.onnx")} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			model = p
			break
		}
	}
	if model == "" {
		return "", fmt.Errorf("embed: %s has no model.onnx (nor onnx/model.onnx)", opt.Dir)
	}
	if opt.Pooling == "" {
		opt.Pooling = PoolingMean
		var pc struct {
			CLS  bool `json:"pooling_mode_cls_token"`
			Mean bool `json:"pooling_mode_mean_tokens"`
		}
		if data, err := os.ReadFile(filepath.Join(opt.Dir, "1_Pooling", "config.json")); err == nil {
			if err := json.Unmarshal(data, &pc); err != nil {
				return "", fmt.Errorf("embed: %s: %w", filepath.Join(opt.Dir, "1_Pooling", "config.json"), err)
			}
			if pc.CLS && !pc.Mean {
				opt.Pooling = PoolingCLS
			}
		}
	}
	if opt.Pooling != PoolingMean && opt.Pooling != PoolingCLS {
		return "", fmt.Errorf("embed: pooling %q is neither %q nor %q", opt.Pooling, PoolingMean, PoolingCLS)
	}
	if opt.Threads <= 0 {
		opt.Threads = runtime.NumCPU()
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultONNXBatch
	}
	return model, nil
}

// modelID hashes the model and tokenizer files with the settings that change the vectors.
func modelID(opt ONNXOptions, model string, maxLen int) (string, error) {
	h := sha256.New()
	for _, p := range []string{model, filepath.Join(opt.Dir, "tokenizer.json"), filepath.Join(opt.Dir, "vocab.txt"),
		filepath.Join(opt.Dir, "tokenizer_config.json")} {
		f, err := os.Open(p)
		if err != nil {
			if p == model {
				return "", err
			}
			continue
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return fmt.Sprintf("onnx:%s:%s:%s:%d", filepath.Base(filepath.Clean(opt.Dir)), hex.EncodeToString(h.Sum(nil))[:16],
		opt.Pooling, maxLen), nil
}

// pool reduces one text's hidden states (seq×hidden, row-major) to a unit vector: the mean over
// positions where mask is 1, or the first position's state for CLS pooling.
func pool(hidden []float32, mask []int64, dim int, mode string) []float32 {
	out := make([]float32, dim)
	if mode == PoolingCLS {
		copy(out, hidden[:dim])
	} else {
		acc := make([]float64, dim)
		var n float64
		for i, m := range mask {
			if m == 0 {
				continue
			}
			n++
			for j, x := range hidden[i*dim : (i+1)*dim] {
				acc[j] += float64(x)
			}
		}
		n = max(n, 1e-9) // sentence-transformers clamps the token count the same way
		for j := range out {
			out[j] = float32(acc[j] / n)
		}
	}
	normalize(out)
	return out
}
