package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/table"
)

// testVocab is a small BERT vocabulary; a token's id is its index.
var testVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", // 0-4
	"the", "cafe", "un", "##aff", "##able", // 5-9
	",", "!", ".", "hello", "world", // 10-14
	"naive", "##s", "run", "##ning", "中", // 15-19
	"国", "'", "t", "don", "a", // 20-24
	"##b", "##c", "resume", "(", ")", // 25-29
	"😀", "Hello", "café", "-", "x", // 30-34
}

const (
	idPAD = iota
	idUNK
	idCLS
	idSEP
	idMASK
	idThe
	idCafe
	idUn
	idAff
	idAble
	idComma
	idBang
	idDot
	idHello
	idWorld
	idNaive
	idS
	idRun
	idNing
	idZhong
	idGuo
	idApos
	idT
	idDon
	idA
	idB
	idC
	idResume
	idLParen
	idRParen
	idGrin
	idHelloCased
	idCafeAccent
	idDash
	idX
)

func vocabFile() []byte { return []byte(strings.Join(testVocab, "\n") + "\n") }

// tokenizerJSONFor writes the Hugging Face tokenizer.json of the test vocabulary.
func tokenizerJSONFor(t testing.TB, lowercase bool, maxLen int) []byte {
	t.Helper()
	vocab := map[string]int{}
	for i, s := range testVocab {
		vocab[s] = i
	}
	var added []map[string]any
	for i, s := range testVocab[:5] {
		added = append(added, map[string]any{"id": i, "content": s, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true})
	}
	var trunc any
	if maxLen > 0 {
		trunc = map[string]any{"direction": "Right", "max_length": maxLen, "strategy": "LongestFirst", "stride": 0}
	}
	doc := map[string]any{
		"version": "1.0", "truncation": trunc, "padding": nil, "added_tokens": added,
		"normalizer": map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
			"strip_accents": nil, "lowercase": lowercase},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{idCLS}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{idSEP}, "tokens": []string{"[SEP]"}},
			}},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tokenizerCases hold ids derived by hand from testVocab for an uncased BERT tokenizer.
var tokenizerCases = []struct {
	name string
	in   string
	want []int32
}{
	{"empty", "", nil},
	{"only white space", " \t\n\r\u00a0\u3000", nil},
	{"punctuation splits", "Hello, World!", []int32{idHello, idComma, idWorld, idBang}},
	{"punctuation runs", "hello...world", []int32{idHello, idDot, idDot, idDot, idWorld}},
	{"ascii symbols are punctuation", "(x)-x", []int32{idLParen, idX, idRParen, idDash, idX}},
	{"apostrophe", "don't", []int32{idDon, idApos, idT}},
	{"accents stripped and lower-cased", "Café NAÏVE Résumé", []int32{idCafe, idNaive, idResume}},
	{"decomposed accents", "cafe\u0301", []int32{idCafe}},
	{"word pieces", "unaffable", []int32{idUn, idAff, idAble}},
	{"suffix pieces", "running runs", []int32{idRun, idNing, idRun, idS}},
	{"longest piece first", "abc", []int32{idA, idB, idC}},
	{"unsplittable word is one unknown", "abd unaffablex", []int32{idUNK, idUNK}},
	{"CJK ideographs split", "中国", []int32{idZhong, idGuo}},
	{"CJK inside a word", "hello中国world", []int32{idHello, idZhong, idGuo, idWorld}},
	{"unknown CJK", "中国人", []int32{idZhong, idGuo, idUNK}},
	{"emoji in vocabulary", "😀 hello", []int32{idGrin, idHello}},
	{"emoji not in vocabulary", "🙂", []int32{idUNK}},
	{"emoji glued to a word", "hello😀", []int32{idUNK}},
	{"emoji variation selector stripped", "😀\ufe0f", []int32{idGrin}},
	{"control characters dropped", "hel\x00lo wor\u200dld\ufffd", []int32{idHello, idWorld}},
	{"vertical tab is a control, removed", "hel\vlo", []int32{idHello}},
	{"line separator is white space", "hello\u2028world", []int32{idHello, idWorld}},
	{"special tokens kept whole", "hello [SEP] world[MASK]", []int32{idHello, idSEP, idWorld, idMASK}},
	{"lower-case special is text", "[sep]", []int32{idUNK, idUNK, idUNK}},
	{"word over 100 characters", strings.Repeat("a", 101), []int32{idUNK}},
	{"word of 100 characters", "a" + strings.Repeat("b", 99), append([]int32{idA}, repeat(idB, 99)...)},
	{"invalid UTF-8 dropped", "hel\xfflo", []int32{idHello}},
}

func repeat(id int32, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = id
	}
	return out
}

func withSpecials(ids []int32) []int32 {
	return append(append([]int32{idCLS}, ids...), idSEP)
}

func TestTokenizerParity(t *testing.T) {
	fromVocab, err := parseVocab(vocabFile(), tokenizerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := parseTokenizerJSON(tokenizerJSONFor(t, true, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []*tokenizer{fromVocab, fromJSON} {
		tok.MaxLen = 512
	}
	for _, tc := range tokenizerCases {
		t.Run(tc.name, func(t *testing.T) {
			want := withSpecials(tc.want)
			for name, tok := range map[string]*tokenizer{"vocab.txt": fromVocab, "tokenizer.json": fromJSON} {
				if diff := cmp.Diff(want, tok.encode(tc.in)); diff != "" {
					t.Errorf("%s: Encode(%q) (-want +got):\n%s", name, tc.in, diff)
				}
			}
		})
	}
}

func TestTokenizerCased(t *testing.T) {
	no := false
	tok, err := parseVocab(vocabFile(), tokenizerConfig{DoLowerCase: &no})
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := parseTokenizerJSON(tokenizerJSONFor(t, false, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want []int32
	}{
		{"Hello hello", []int32{idHelloCased, idHello}},
		{"café Café", []int32{idCafeAccent, idUNK}}, // no accent stripping without lower-casing
		{"HELLO", []int32{idUNK}},
	} {
		for name, tk := range map[string]*tokenizer{"vocab.txt": tok, "tokenizer.json": fromJSON} {
			if diff := cmp.Diff(withSpecials(tc.want), tk.encode(tc.in)); diff != "" {
				t.Errorf("%s: Encode(%q) (-want +got):\n%s", name, tc.in, diff)
			}
		}
	}
}

func TestTokenizerTruncation(t *testing.T) {
	tok, err := parseTokenizerJSON(tokenizerJSONFor(t, true, 8))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("hello ", 2000) + "world"
	if diff := cmp.Diff(withSpecials(repeat(idHello, 6)), tok.encode(long)); diff != "" {
		t.Errorf("truncated (-want +got):\n%s", diff)
	}
	// Truncation cuts inside a word's pieces, as Hugging Face does.
	if diff := cmp.Diff(withSpecials([]int32{idHello, idHello, idHello, idHello, idUn, idAff}),
		tok.encode("hello hello hello hello unaffable")); diff != "" {
		t.Errorf("truncated inside a word (-want +got):\n%s", diff)
	}
	if got := tok.encode(strings.Repeat("中", 100000)); len(got) != 8 {
		t.Errorf("%d ids for a very long CJK text, want 8", len(got))
	}
}

func TestLoadTokenizer(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("vocab.txt", string(vocabFile()))
	write("tokenizer_config.json", `{"do_lower_case": true, "model_max_length": 16, "unk_token": {"content": "[UNK]"}}`)
	tok, err := loadTokenizer(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.MaxLen != 16 {
		t.Errorf("MaxLen %d from tokenizer_config.json, want 16", tok.MaxLen)
	}
	write("sentence_bert_config.json", `{"max_seq_length": 12, "do_lower_case": false}`)
	if tok, err = loadTokenizer(dir, 0); err != nil || tok.MaxLen != 12 {
		t.Errorf("MaxLen with sentence_bert_config.json: %v, %v; want 12", tok, err)
	}
	if tok, err = loadTokenizer(dir, 5); err != nil || tok.MaxLen != 5 {
		t.Errorf("MaxLen with an explicit maximum: %v, %v; want 5", tok, err)
	}
	write("tokenizer.json", string(tokenizerJSONFor(t, true, 0)))
	if tok, err = loadTokenizer(dir, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withSpecials([]int32{idHello}), tok.encode("HELLO")); diff != "" {
		t.Errorf("tokenizer.json preferred (-want +got):\n%s", diff)
	}
	if _, err := loadTokenizer(t.TempDir(), 0); err == nil || !strings.Contains(err.Error(), "neither tokenizer.json nor vocab.txt") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestParseTokenizerErrors(t *testing.T) {
	good := string(tokenizerJSONFor(t, true, 0))
	parse := func(in string) error {
		_, err := parseTokenizerJSON([]byte(in))
		return err
	}
	table.Errors(t, "parseTokenizerJSON", parse, []table.Case[string, string]{
		{"not JSON", "{", "tokenizer.json"},
		{"BPE model", strings.Replace(good, `"type":"WordPiece","unk_token"`, `"type":"BPE","unk_token"`, 1), "only BERT WordPiece"},
		{"other normalizer", strings.Replace(good, `"BertNormalizer"`, `"NFKC"`, 1), "only BertNormalizer"},
		{"other pre-tokenizer", strings.Replace(good, `"BertPreTokenizer"`, `"Metaspace"`, 1), "only BertPreTokenizer"},
		{"unknown unk", strings.Replace(good, `"unk_token":"[UNK]"`, `"unk_token":"<unk>"`, 1), "unknown token"},
		{"negative id", strings.Replace(good, `"hello":13`, `"hello":-13`, 1), "id -13"},
		{"empty vocabulary", `{"model": {"type": "WordPiece", "vocab": {}}}`, "empty vocabulary"},
	})
	if _, err := parseVocab([]byte("a\nb\n"), tokenizerConfig{}); err == nil || !strings.Contains(err.Error(), "lacks the unk token") {
		t.Errorf("vocab without specials: %v", err)
	}
	if _, err := parseVocab([]byte("[UNK]\xff"), tokenizerConfig{}); err == nil {
		t.Error("invalid UTF-8 vocabulary accepted")
	}
}

// checkEncoding asserts what every encoding must satisfy.
func checkEncoding(t *testing.T, tok *tokenizer, text string) {
	ids := tok.encode(text)
	if tok.MaxLen > 0 && len(ids) > tok.MaxLen {
		t.Fatalf("Encode(%q): %d ids, MaxLen %d", text, len(ids), tok.MaxLen)
	}
	if len(ids) < len(tok.prefix)+len(tok.suffix) {
		t.Fatalf("Encode(%q) = %v lacks the special tokens", text, ids)
	}
	for _, id := range ids {
		if id < 0 || id >= tok.size {
			t.Fatalf("Encode(%q): id %d outside the vocabulary of %d", text, id, tok.size)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, tc := range tokenizerCases {
		f.Add(tc.in)
	}
	tok, err := parseVocab(vocabFile(), tokenizerConfig{})
	if err != nil {
		f.Fatal(err)
	}
	tok.MaxLen = 32
	f.Fuzz(func(t *testing.T, text string) {
		checkEncoding(t, tok, text)
		// Without truncation, the special tokens come only from the text.
		if strings.Contains(text, "[") {
			return
		}
		for _, p := range tok.tokens(text) {
			if p == "" || strings.HasPrefix(p, "[") && p != "[UNK]" {
				t.Fatalf("Tokens(%q) holds piece %q", text, p)
			}
		}
	})
}

func FuzzParseTokenizerJSON(f *testing.F) {
	// Small seeds: the mutator works on them far faster than on a whole vocabulary.
	f.Add([]byte(`{"normalizer":{"type":"BertNormalizer","lowercase":true,"strip_accents":null},"pre_tokenizer":{"type":"BertPreTokenizer"},` +
		`"added_tokens":[{"id":0,"content":"[UNK]","special":true},{"id":1,"content":"[CLS]","special":true},{"id":2,"content":"[SEP]","special":true}],` +
		`"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]"}},{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"[SEP]"}}],` +
		`"special_tokens":{"[CLS]":{"ids":[1]},"[SEP]":{"ids":[2]}}},"truncation":{"max_length":8},` +
		`"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,` +
		`"vocab":{"[UNK]":0,"[CLS]":1,"[SEP]":2,"hello":3,"##s":4,"中":5,",":6}}}`))
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0}},"post_processor":{"type":"BertProcessing","cls":["[CLS]",0],"sep":["[SEP]",0]}}`))
	f.Add([]byte(`{"model":{"vocab":{"[UNK]":5}},"normalizer":null,"truncation":{"max_length":2}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parseTokenizerJSON(data)
		if err != nil {
			return
		}
		for _, text := range []string{"Hello, wörld! 中国 [CLS]", "", strings.Repeat("ab ", 50)} {
			checkEncoding(t, tok, text)
		}
	})
}

func FuzzParseVocab(f *testing.F) {
	f.Add(vocabFile(), false)
	f.Add([]byte("[UNK]\n[CLS]\n[SEP]\n[PAD]\n##\n#\n"), true)
	f.Add([]byte("[UNK]\r\n[CLS]\r\n[SEP]\r\n[PAD]"), false)
	f.Fuzz(func(t *testing.T, data []byte, cased bool) {
		lower := !cased
		tok, err := parseVocab(data, tokenizerConfig{DoLowerCase: &lower})
		if err != nil {
			return
		}
		tok.MaxLen = 16
		for _, text := range []string{"Hello, wörld! 中国 [CLS]", "", strings.Repeat("##", 60)} {
			checkEncoding(t, tok, text)
		}
	})
}
