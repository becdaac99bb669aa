package embed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is BERT's WordPiece tokenizer as Hugging Face runs it (BertNormalizer,
// BertPreTokenizer, WordPiece, the [CLS] … [SEP] template): clean the text (drop control
// characters, make every white space a space), put spaces around CJK ideographs, strip accents
// and lower-case per the configuration, split at white space and punctuation, then split each
// word greedily into the longest vocabulary pieces, continuation pieces prefixed "##"; a word
// with no split, or longer than MaxWordChars, becomes [UNK]. Special tokens written in the text
// ("[SEP]") are kept whole. encode truncates to MaxLen ids, specials included.
//
// Known differences from Hugging Face: lower-casing maps rune by rune (Go's unicode.ToLower)
// where Rust and Python may expand a rune into several ("İ" → "i̇"), and the Unicode version is
// Go's; both touch only rare characters.
type tokenizer struct {
	vocab        map[string]int32
	size         int32 // one more than the largest id
	unk          int32
	pad          int32
	prefix       []int32 // ids put before the text ([CLS])
	suffix       []int32 // ids put after it ([SEP])
	specials     []string
	specialIDs   map[string]int32
	Lowercase    bool
	StripAccents bool
	CleanText    bool
	ChineseChars bool
	Continuation string // "##"
	MaxWordChars int    // longer words become [UNK]; 100 in BERT
	MaxLen       int    // most ids Encode returns, specials included
}

// Defaults of BERT tokenizers.
const (
	defaultMaxLen       = 512
	defaultMaxWordChars = 100
	maxVocab            = 1 << 22 // bounds what a vocabulary file may make us allocate
)

// tokenizerConfig is what a vocab.txt does not say: the fields of Hugging Face's
// tokenizer_config.json that the BERT tokenizer reads. Nil pointers take BERT's defaults.
type tokenizerConfig struct {
	DoLowerCase          *bool   `json:"do_lower_case"`
	StripAccents         *bool   `json:"strip_accents"`
	TokenizeChineseChars *bool   `json:"tokenize_chinese_chars"`
	ModelMaxLength       float64 `json:"model_max_length"`
	UnkToken             any     `json:"unk_token"`
	ClsToken             any     `json:"cls_token"`
	SepToken             any     `json:"sep_token"`
	PadToken             any     `json:"pad_token"`
	MaskToken            any     `json:"mask_token"`
}

// loadTokenizer reads the tokenizer of a model folder: tokenizer.json when present, else
// vocab.txt with tokenizer_config.json (both Hugging Face formats). maxLen > 0 overrides the
// maximum length; otherwise it comes from sentence_bert_config.json's max_seq_length, the
// tokenizer's truncation, tokenizer_config.json's model_max_length, or defaultMaxLen.
func loadTokenizer(dir string, maxLen int) (*tokenizer, error) {
	var cfg tokenizerConfig
	if data, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("embed: %s: %w", filepath.Join(dir, "tokenizer_config.json"), err)
		}
	}
	var tok *tokenizer
	if data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json")); err == nil {
		if tok, err = parseTokenizerJSON(data); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, filepath.Join(dir, "tokenizer.json"))
		}
	} else if data, verr := os.ReadFile(filepath.Join(dir, "vocab.txt")); verr == nil {
		if tok, err = parseVocab(data, cfg); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, filepath.Join(dir, "vocab.txt"))
		}
	} else {
		return nil, fmt.Errorf("embed: %s has neither tokenizer.json nor vocab.txt", dir)
	}
	var sb struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sentence_bert_config.json")); err == nil {
		if err := json.Unmarshal(data, &sb); err != nil {
			return nil, fmt.Errorf("embed: %s: %w", filepath.Join(dir, "sentence_bert_config.json"), err)
		}
	}
	switch {
	case maxLen > 0:
		tok.MaxLen = maxLen
	case sb.MaxSeqLength > 0:
		tok.MaxLen = sb.MaxSeqLength
	case tok.MaxLen > 0: // from tokenizer.json's truncation
	case cfg.ModelMaxLength >= 1 && cfg.ModelMaxLength <= 1<<16:
		tok.MaxLen = int(cfg.ModelMaxLength)
	default:
		tok.MaxLen = defaultMaxLen
	}
	if tok.MaxLen < len(tok.prefix)+len(tok.suffix)+1 {
		return nil, fmt.Errorf("embed: maximum length %d leaves no room for text", tok.MaxLen)
	}
	return tok, nil
}

// tokenName reads a special token of tokenizer_config.json: a string or {"content": ...}.
func tokenName(v any, def string) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		if s, ok := t["content"].(string); ok {
			return s
		}
	}
	return def
}

// parseVocab builds a BERT tokenizer from vocab.txt (one token a line, ids by line number) and
// the settings of tokenizer_config.json.
func parseVocab(data []byte, cfg tokenizerConfig) (*tokenizer, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("embed: vocabulary is not valid UTF-8")
	}
	t := newTokenizer()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1024), 1<<20)
	id := int32(0)
	for sc.Scan() {
		tok := strings.TrimRight(sc.Text(), "\r")
		if id >= maxVocab {
			return nil, fmt.Errorf("embed: vocabulary has more than %d tokens", maxVocab)
		}
		if _, dup := t.vocab[tok]; !dup { // the first of duplicate lines wins, as in Hugging Face
			t.vocab[tok] = id
		}
		id++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading vocabulary: %w", err)
	}
	t.size = id
	lower := cfg.DoLowerCase == nil || *cfg.DoLowerCase
	t.Lowercase = lower
	t.StripAccents = lower
	if cfg.StripAccents != nil {
		t.StripAccents = *cfg.StripAccents
	}
	t.ChineseChars = cfg.TokenizeChineseChars == nil || *cfg.TokenizeChineseChars
	names := map[string]string{
		"unk": tokenName(cfg.UnkToken, "[UNK]"), "cls": tokenName(cfg.ClsToken, "[CLS]"),
		"sep": tokenName(cfg.SepToken, "[SEP]"), "pad": tokenName(cfg.PadToken, "[PAD]"),
		"mask": tokenName(cfg.MaskToken, "[MASK]"),
	}
	ids := map[string]int32{}
	for _, role := range []string{"unk", "cls", "sep", "pad"} {
		v, ok := t.vocab[names[role]]
		if !ok {
			return nil, fmt.Errorf("embed: vocabulary lacks the %s token %q", role, names[role])
		}
		ids[role] = v
	}
	t.unk, t.pad = ids["unk"], ids["pad"]
	t.prefix, t.suffix = []int32{ids["cls"]}, []int32{ids["sep"]}
	for _, role := range []string{"unk", "cls", "sep", "pad", "mask"} {
		if v, ok := t.vocab[names[role]]; ok {
			t.addSpecial(names[role], v)
		}
	}
	return t, nil
}

func newTokenizer() *tokenizer {
	return &tokenizer{vocab: map[string]int32{}, specialIDs: map[string]int32{}, CleanText: true,
		ChineseChars: true, Lowercase: true, StripAccents: true, Continuation: "##", MaxWordChars: defaultMaxWordChars}
}

func (t *tokenizer) addSpecial(s string, id int32) {
	if s == "" {
		return
	}
	if _, ok := t.specialIDs[s]; !ok {
		t.specials = append(t.specials, s)
	}
	t.specialIDs[s] = id
	// Longest first, so that "[SEP2]" would win over "[SEP]" at the same position.
	sort.SliceStable(t.specials, func(a, b int) bool { return len(t.specials[a]) > len(t.specials[b]) })
}

// tokenizerJSON is the part of Hugging Face's tokenizer.json a BERT tokenizer needs.
type tokenizerJSON struct {
	Truncation *struct {
		MaxLength int `json:"max_length"`
	} `json:"truncation"`
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type   string `json:"type"`
		Cls    []any  `json:"cls"`
		Sep    []any  `json:"sep"`
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int32 `json:"ids"`
		} `json:"special_tokens"`
	} `json:"post_processor"`
	Model struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// parseTokenizerJSON builds a tokenizer from Hugging Face's tokenizer.json. Only BERT-style
// tokenizers are supported: a WordPiece model, a BertNormalizer (or none), a BertPreTokenizer
// and a BertProcessing or TemplateProcessing post-processor (or none).
func parseTokenizerJSON(data []byte) (*tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("embed: tokenizer.json: %w", err)
	}
	if tj.Model.Type != "WordPiece" && !(tj.Model.Type == "" && tj.Model.Vocab != nil) {
		return nil, fmt.Errorf("embed: tokenizer.json: model type %q is not supported (only BERT WordPiece)", tj.Model.Type)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, errors.New("embed: tokenizer.json: empty vocabulary")
	}
	if len(tj.Model.Vocab) > maxVocab {
		return nil, fmt.Errorf("embed: tokenizer.json: vocabulary has more than %d tokens", maxVocab)
	}
	t := newTokenizer()
	t.vocab = tj.Model.Vocab
	for tok, id := range t.vocab {
		if id < 0 || id >= maxVocab {
			return nil, fmt.Errorf("embed: tokenizer.json: token %q has id %d", tok, id)
		}
		t.size = max(t.size, id+1)
	}
	if p := tj.Model.ContinuingSubwordPrefix; p != nil {
		t.Continuation = *p
	}
	if tj.Model.MaxInputCharsPerWord > 0 {
		t.MaxWordChars = tj.Model.MaxInputCharsPerWord
	}
	unk := tj.Model.UnkToken
	if unk == "" {
		unk = "[UNK]"
	}
	var ok bool
	if t.unk, ok = t.vocab[unk]; !ok {
		return nil, fmt.Errorf("embed: tokenizer.json: the unknown token %q is not in the vocabulary", unk)
	}
	t.pad = t.unk
	if id, ok := t.vocab["[PAD]"]; ok {
		t.pad = id
	}
	if n := tj.Normalizer; n == nil {
		t.Lowercase, t.StripAccents, t.CleanText, t.ChineseChars = false, false, false, false
	} else {
		if n.Type != "BertNormalizer" {
			return nil, fmt.Errorf("embed: tokenizer.json: normalizer %q is not supported (only BertNormalizer)", n.Type)
		}
		flag := func(p *bool, def bool) bool {
			if p == nil {
				return def
			}
			return *p
		}
		t.CleanText = flag(n.CleanText, true)
		t.ChineseChars = flag(n.HandleChineseChars, true)
		t.Lowercase = flag(n.Lowercase, true)
		t.StripAccents = flag(n.StripAccents, t.Lowercase)
	}
	if p := tj.PreTokenizer; p != nil && p.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("embed: tokenizer.json: pre-tokenizer %q is not supported (only BertPreTokenizer)", p.Type)
	}
	for _, a := range tj.AddedTokens {
		if a.Special {
			if a.ID < 0 || a.ID >= maxVocab {
				return nil, fmt.Errorf("embed: tokenizer.json: added token %q has id %d", a.Content, a.ID)
			}
			t.addSpecial(a.Content, a.ID)
			t.size = max(t.size, a.ID+1)
		}
	}
	if pp := tj.PostProcessor; pp != nil {
		switch pp.Type {
		case "BertProcessing":
			cls, err := pairID(pp.Cls)
			if err != nil {
				return nil, fmt.Errorf("embed: tokenizer.json: post_processor cls: %w", err)
			}
			sep, err := pairID(pp.Sep)
			if err != nil {
				return nil, fmt.Errorf("embed: tokenizer.json: post_processor sep: %w", err)
			}
			t.prefix, t.suffix = []int32{cls}, []int32{sep}
		case "TemplateProcessing":
			seen := false
			for _, item := range pp.Single {
				switch {
				case item.Sequence != nil:
					seen = true
				case item.SpecialToken != nil:
					st, ok := pp.SpecialTokens[item.SpecialToken.ID]
					if !ok {
						return nil, fmt.Errorf("embed: tokenizer.json: template names unknown special token %q", item.SpecialToken.ID)
					}
					if seen {
						t.suffix = append(t.suffix, st.IDs...)
					} else {
						t.prefix = append(t.prefix, st.IDs...)
					}
				}
			}
		default:
			return nil, fmt.Errorf("embed: tokenizer.json: post-processor %q is not supported", pp.Type)
		}
	}
	for _, id := range append(append([]int32(nil), t.prefix...), t.suffix...) {
		if id < 0 || id >= t.size {
			return nil, fmt.Errorf("embed: tokenizer.json: special id %d outside the vocabulary", id)
		}
	}
	if tj.Truncation != nil && tj.Truncation.MaxLength > 0 {
		t.MaxLen = tj.Truncation.MaxLength
		if t.MaxLen < len(t.prefix)+len(t.suffix)+1 {
			return nil, fmt.Errorf("embed: tokenizer.json: truncation at %d tokens leaves no room for text", t.MaxLen)
		}
	}
	return t, nil
}

// pairID reads a BertProcessing ["[CLS]", 101] pair.
func pairID(v []any) (int32, error) {
	if len(v) != 2 {
		return 0, fmt.Errorf("want [token, id], got %v", v)
	}
	f, ok := v[1].(float64)
	if !ok || f < 0 || f >= maxVocab || f != float64(int32(f)) {
		return 0, fmt.Errorf("bad id %v", v[1])
	}
	return int32(f), nil
}

// padID is the id used to pad a batch.
func (t *tokenizer) padID() int32 { return t.pad }

// encode returns the ids of text with the template's special tokens ([CLS] … [SEP]),
// truncated to MaxLen (when MaxLen > 0) by dropping pieces from the end of the text.
func (t *tokenizer) encode(text string) []int32 {
	budget := -1
	if t.MaxLen > 0 {
		budget = max(0, t.MaxLen-len(t.prefix)-len(t.suffix))
	}
	ids := append([]int32(nil), t.prefix...)
	ids = t.appendPieces(ids, text, budget)
	return append(ids, t.suffix...)
}

// tokens returns the word pieces of text without special tokens or truncation (for tests and
// debugging).
func (t *tokenizer) tokens(text string) []string {
	names := make(map[int32]string, len(t.vocab))
	for s, id := range t.vocab {
		if old, ok := names[id]; !ok || s < old {
			names[id] = s
		}
	}
	var out []string
	for _, id := range t.appendPieces(nil, text, -1) {
		out = append(out, names[id])
	}
	return out
}

// appendPieces appends the ids of text's word pieces, at most budget of them (−1: no limit).
func (t *tokenizer) appendPieces(ids []int32, text string, budget int) []int32 {
	start := len(ids)
	full := func() bool { return budget >= 0 && len(ids)-start >= budget }
	for len(text) > 0 && !full() {
		// Special tokens written in the text are matched before normalization.
		at, sp := len(text), ""
		for _, s := range t.specials {
			if i := strings.Index(text, s); i >= 0 && (i < at || i == at && len(s) > len(sp)) {
				at, sp = i, s
			}
		}
		for _, w := range t.words(text[:at]) {
			if full() {
				break
			}
			ids = t.wordPiece(ids, w, budget-(len(ids)-start))
		}
		if sp == "" || full() {
			break
		}
		ids = append(ids, t.specialIDs[sp])
		text = text[at+len(sp):]
	}
	if budget >= 0 && len(ids)-start > budget {
		ids = ids[:start+budget]
	}
	return ids
}

// words normalizes text and splits it at white space and punctuation (BertNormalizer and
// BertPreTokenizer).
func (t *tokenizer) words(text string) []string {
	var b strings.Builder
	for _, r := range text {
		if t.CleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				b.WriteByte(' ')
				continue
			}
		}
		if t.ChineseChars && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if t.StripAccents {
		s = norm.NFD.String(s)
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, s)
	}
	if t.Lowercase {
		s = strings.ToLower(s)
	}
	var out []string
	begin := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if begin >= 0 {
				out = append(out, s[begin:i])
				begin = -1
			}
		case isPunct(r):
			if begin >= 0 {
				out = append(out, s[begin:i])
				begin = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		default:
			if begin < 0 {
				begin = i
			}
		}
	}
	if begin >= 0 {
		out = append(out, s[begin:])
	}
	return out
}

// wordPiece appends the ids of one word's pieces (greedy longest match first), at most budget
// of them; a word it cannot split becomes the unknown token.
func (t *tokenizer) wordPiece(ids []int32, word string, budget int) []int32 {
	if utf8.RuneCountInString(word) > t.MaxWordChars {
		return append(ids, t.unk)
	}
	start := len(ids)
	for pos := 0; pos < len(word); {
		end := len(word)
		found := false
		for end > pos {
			piece := word[pos:end]
			if pos > 0 {
				piece = t.Continuation + piece
			}
			if id, ok := t.vocab[piece]; ok {
				ids = append(ids, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[pos:end])
			end -= size
		}
		if !found {
			return append(ids[:start], t.unk)
		}
		pos = end
	}
	if budget >= 0 && len(ids)-start > budget {
		// Truncation cuts inside the word, as Hugging Face's does.
		ids = ids[:start+budget]
	}
	return ids
}

// isWhitespace is white space as Hugging Face's Rust tokenizers see it (Unicode White_Space).
// Cleaning removes the control characters among them (\v, \f, U+0085) first.
func isWhitespace(r rune) bool { return unicode.IsSpace(r) }

// isControl is BERT's control character: category C (Cc, Cf, Co, Cs, unassigned), except the
// white space controls.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.Is(unicode.C, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isPunct is BERT's punctuation: every non-alphanumeric ASCII symbol and category P.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK reports a CJK Unified Ideograph (BERT's "Chinese character" blocks).
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
