package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/caskg/caskg/native/internal/atomicfile"
)

// cacheMagic starts every cache file: "cev1", then the dimension u32, then dim float32s.
const cacheMagic = "cev1"

// Cache is an Embedder that keeps every vector on disk, one file per (model id, text):
// dir/<model hash>/<text hash[:2]>/<text hash>.vec. A rebuild after a small change to the
// library, or after an interrupted run, embeds only the texts it has not seen. Files are written
// through native/internal/atomicfile, so a reader sees a whole file or none; they are not fsynced
// (atomicfile.WriteNoSync), and a file torn by a power loss, like any corrupt one, reads as a
// miss.
type Cache struct {
	Embedder
	dir string

	hits, misses atomic.Int64
}

// Cached wraps e with an on-disk cache under dir (created when missing).
func Cached(e Embedder, dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("embed: the cache needs a directory")
	}
	sum := sha256.Sum256([]byte(e.ID()))
	sub := filepath.Join(dir, hex.EncodeToString(sum[:12]))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return nil, fmt.Errorf("embed: cache: %w", err)
	}
	// A note naming the model, for people looking into the cache.
	note := filepath.Join(sub, "MODEL")
	if _, err := os.Stat(note); err != nil {
		_ = atomicfile.Write(note, []byte(e.ID()+"\n"))
	}
	return &Cache{Embedder: e, dir: sub}, nil
}

// Stats returns how many texts were served from the cache and how many were embedded.
func (c *Cache) Stats() (hits, misses int) { return int(c.hits.Load()), int(c.misses.Load()) }

// Unwrap returns the embedder behind the cache.
func (c *Cache) Unwrap() Embedder { return c.Embedder }

// Close closes the embedder behind the cache when it has a Close method (an ONNX session).
func (c *Cache) Close() error {
	if cl, ok := c.Embedder.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

func (c *Cache) path(text string) string {
	sum := sha256.Sum256([]byte(text))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(c.dir, h[:2], h+".vec")
}

// Embed returns cached vectors and embeds the rest in one call to the wrapped embedder, storing
// each new vector as soon as the call returns.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missIdx []int
	var missTexts []string
	first := map[string]int{} // texts repeated within the call are embedded once
	for i, t := range texts {
		if v, ok := c.get(t); ok {
			out[i] = v
			c.hits.Add(1)
			continue
		}
		if _, dup := first[t]; !dup {
			first[t] = len(missTexts)
			missTexts = append(missTexts, t)
		}
		missIdx = append(missIdx, i)
	}
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missTexts) {
		return nil, fmt.Errorf("embed: %s returned %d vectors for %d texts", c.ID(), len(vecs), len(missTexts))
	}
	var werr error
	for k, t := range missTexts {
		if err := c.put(t, vecs[k]); err != nil && werr == nil {
			werr = fmt.Errorf("embed: writing the cache: %w", err)
		}
	}
	c.misses.Add(int64(len(missTexts)))
	for _, i := range missIdx {
		out[i] = vecs[first[texts[i]]]
	}
	return out, werr
}

func (c *Cache) get(text string) ([]float32, bool) {
	data, err := os.ReadFile(c.path(text))
	if err != nil || len(data) < 8 || string(data[:4]) != cacheMagic {
		return nil, false
	}
	dim := int(binary.LittleEndian.Uint32(data[4:]))
	if len(data) != 8+4*dim || (c.Dim() > 0 && dim != c.Dim()) {
		return nil, false
	}
	v := make([]float32, dim)
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[8+4*j:]))
		if math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
			return nil, false
		}
	}
	return v, true
}

func (c *Cache) put(text string, v []float32) error {
	data := make([]byte, 8, 8+4*len(v))
	copy(data, cacheMagic)
	binary.LittleEndian.PutUint32(data[4:], uint32(len(v)))
	for _, x := range v {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
	}
	p := c.path(text)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNoSync(p, data)
}
