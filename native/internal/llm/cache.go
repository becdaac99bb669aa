package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caskg/caskg/native/internal/atomicfile"
)

// cache stores one answer per file: dir/ab/abcdef….json holding {"score":x,"raw":"..."}.
// Files are written through native/internal/atomicfile, so a reader (or a build killed midway) sees
// either no file or a complete one. They are not fsynced (atomicfile.WriteNoSync): the cache
// survives a killed process, and a file torn by a power loss reads as a miss.
type cache struct{ dir string }

type cacheEntry struct {
	Score *float64 `json:"score"`
	Raw   string   `json:"raw"`
}

// key hashes everything that determines an answer, except MaxTokens (which only truncates).
// Fields are separated by NUL, which the URL, model and kind cannot contain in practice.
func (c *Client) key(p Prompt) string {
	h := sha256.New()
	for _, part := range []string{c.base, c.cfg.Model, p.Kind, p.System, p.User} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write([]byte(strconv.FormatFloat(c.cfg.Temperature, 'g', -1, 64)))
	return hex.EncodeToString(h.Sum(nil))
}

func (c *cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// get reads an answer. A missing, unreadable or corrupt file is a miss.
func (c *cache) get(key string) (score float64, raw string, ok bool) {
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return 0, "", false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.Score == nil || math.IsNaN(*e.Score) || !inUnit(*e.Score) {
		return 0, "", false
	}
	return *e.Score, e.Raw, true
}

// put writes an answer atomically, replacing any previous (possibly corrupt) file.
func (c *cache) put(key string, score float64, raw string) error {
	data, err := json.Marshal(cacheEntry{Score: &score, Raw: raw})
	if err != nil {
		return err
	}
	final := c.path(key)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNoSync(final, data)
}
