package engine

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/caskg/caskg/native/testlib/table"
)

func TestWords(t *testing.T) {
	table.Run(t, "Words", Words, []table.Case[string, []string]{
		{"empty", "", nil},
		{"only punctuation", "  ...,;!? — ", nil},
		{"snake_case", "extract_pdf_tables", []string{"extract", "pdf", "tables"}},
		{"kebab-case", "pick-up-object", []string{"pick", "up", "object"}},
		{"camelCase", "getUserName", []string{"get", "user", "name"}},
		{"PascalCase", "PickUpObject", []string{"pick", "up", "object"}},
		{"acronym then word", "HTTPServer", []string{"http", "server"}},
		{"word acronym word", "getHTTPResponseCode", []string{"get", "http", "response", "code"}},
		{"acronym run then camel", "XMLHttpRequest", []string{"xml", "http", "request"}},
		{"all caps", "README", []string{"readme"}},
		{"single capital word", "Kettle", []string{"kettle"}},
		{"digits stay in words", "s3_bucket ipv4 http2", []string{"s3", "bucket", "ipv4", "http2"}},
		{"digit then camel", "3dPrint", []string{"3d", "print"}},
		{"camel after digit", "ipv4Address base64Encode", []string{"ipv4", "address", "base64", "encode"}},
		{"latin after CJK", "数据Analysis", []string{"数据", "analysis"}},
		{"dotted version", "v1.2.30", []string{"v1", "2", "30"}},
		{"punctuation", "Hello, world! (test) — done.", []string{"hello", "world", "test", "done"}},
		{"path and flags", "/usr/bin/go --race", []string{"usr", "bin", "go", "race"}},
		{"latin accents", "Café naïve Über", []string{"café", "naïve", "über"}},
		{"accented camel", "ÉcoleNormale", []string{"école", "normale"}},
		{"CJK", "数据分析, 机器学习", []string{"数据分析", "机器学习"}},
		{"CJK then Latin lower case", "用python查询", []string{"用", "python", "查询"}},
		{"CJK then digits", "2024年の天気", []string{"2024", "年の天気"}},
		{"kana and Han one run", "天気を調べる", []string{"天気を調べる"}},
		{"Hangul words", "서울의 날씨를 알려줘", []string{"서울의", "날씨를", "알려줘"}},
		{"full-width Latin folds", "ＰＤＦの表", []string{"pdf", "の表"}},
		{"full-width camel", "ＧｅｔＵｓｅｒ", []string{"get", "user"}},
		{"ideograph beyond the BMP", "𠮷野家", []string{"𠮷野家"}},
		{"invalid UTF-8 separates", "ab\xffcd", []string{"ab", "cd"}},
	})
}

func TestTokenize(t *testing.T) {
	table.Run(t, "Tokenize", Tokenize, []table.Case[string, []string]{
		{"empty", "", nil},
		{"stop words only", "what is the and of it", nil},
		{"single letters dropped", "x y z", nil},
		{"question", "How do I parse the JSON files?", []string{"pars", "json", "fil"}},
		{"identifier with stop word", "heat_object_in_microwave", []string{"heat", "object", "microwav"}},
		{"camel with acronym", "The HTTPServer handles requests", []string{"http", "server", "handl", "request"}},
		{"inflections", "Running tests; stopped boxes", []string{"run", "test", "stop", "box"}},
		{"repeats kept", "tea tea Teas", []string{"tea", "tea", "tea"}},
		{"digits", "convert mp3s to wav at 44100 Hz", []string{"convert", "mp3s", "wav", "44100", "hz"}},
		{"non-ASCII words unstemmed", "café résumés", []string{"café", "résumés"}},
		{"short words unchanged", "was its bus use", []string{"bus", "use"}},
		// CJK runs give overlapping bigrams, a lone character itself (Lucene's CJK analyzer).
		{"Han bigrams", "查询北京", []string{"查询", "询北", "北京"}},
		{"Han two characters", "天气", []string{"天气"}},
		{"Han lone character", "的", []string{"的"}},
		{"Han with punctuation", "帮我查询，北京的天气。", []string{"帮我", "我查", "查询", "北京", "京的", "的天", "天气"}},
		{"mixed scripts", "用Python查询PDF文件", []string{"用", "python", "查询", "pdf", "文件"}},
		{"Japanese kana and kanji", "天気を調べる", []string{"天気", "気を", "を調", "調べ", "べる"}},
		{"Katakana", "テーブル", []string{"テー", "ーブ", "ブル"}},
		{"half-width katakana", "ﾃｰﾌﾞﾙ", []string{"ﾃｰ", "ｰﾌ", "ﾌﾞ", "ﾞﾙ"}},
		{"Hangul", "서울의 날씨 꼭", []string{"서울", "울의", "날씨", "꼭"}},
		{"full-width Latin stems", "ＰＤＦ　ｆｉｌｅｓを変換", []string{"pdf", "fil", "を変", "変換"}},
		{"CJK beside stop words", "the 表 of data", []string{"表", "data"}},
		{"ideograph beyond the BMP", "𠮷野家", []string{"𠮷野", "野家"}},
	})
}

func TestStem(t *testing.T) {
	table.Run(t, "Stem", Stem, []table.Case[string, string]{
		{"plural", "heats", "heat"},
		{"past", "heated", "heat"},
		{"gerund", "heating", "heat"},
		{"bare", "heat", "heat"},
		{"final e", "measure", "measur"},
		{"final e past", "measured", "measur"},
		{"final e plural", "measures", "measur"},
		{"final e gerund", "measuring", "measur"},
		{"ies", "queries", "query"},
		{"y", "query", "query"},
		{"sses", "classes", "class"},
		{"ss kept", "class", "class"},
		{"xes", "boxes", "box"},
		{"ches", "batches", "batch"},
		{"shes", "dishes", "dish"},
		{"double consonant gerund", "running", "run"},
		{"double consonant past", "stopped", "stop"},
		{"is kept", "analysis", "analysis"},
		{"us kept", "status", "status"},
		{"three letters", "was", "was"},
		{"three letters plural-looking", "its", "its"},
		{"two letters", "is", "is"},
		{"one letter", "s", "s"},
		{"empty", "", ""},
		{"accented", "résumés", "résumés"},
		{"CJK", "数据分析", "数据分析"},
		{"CJK bigram", "天气", "天气"},
		{"digits", "mp3s", "mp3s"},
	})
}

// TestStemFolds checks the property the index relies on: inflections of one word meet on one key.
func TestStemFolds(t *testing.T) {
	groups := [][]string{
		{"heat", "heats", "heated", "heating"},
		{"measure", "measures", "measured", "measuring"},
		{"parse", "parses", "parsed", "parsing"},
		{"cache", "caches", "cached", "caching"},
		{"file", "files", "filed"},
		{"process", "processes", "processed", "processing"},
		{"query", "queries"},
		{"need", "needs", "needed"},
	}
	for _, g := range groups {
		want := Stem(g[0])
		for _, w := range g[1:] {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q; want one key", g[0], want, w, got)
			}
		}
	}
}

// FuzzTokenize checks what the index relies on for any text: no panic; every term non-empty
// valid UTF-8 without a separator; a term with a CJK letter is one or two CJK letters (a
// bigram or a lone character); and no more terms than the text has runes.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"", "How do I parse the JSON files?", "getHTTPResponseCode", "ab\xffcd",
		"帮我查询北京的天气", "查询指定城市的天气预报", "用Python查询PDF文件", "天気を調べる",
		"서울의 날씨를 알려줘", "ＰＤＦ　ｆｉｌｅｓを変換", "ﾃｰﾌﾞﾙ", "𠮷野家", "数据Analysis", "a表b",
		"\xe4\xb8", "表\xff表", "ǅungla Ǆ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		terms := Tokenize(text)
		if len(terms) > utf8.RuneCountInString(text) {
			t.Fatalf("%d terms from %d runes", len(terms), utf8.RuneCountInString(text))
		}
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("term %q of %q", term, text)
			}
			rs := []rune(term)
			cjk := 0
			for _, r := range rs {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("term %q of %q holds %q", term, text, r)
				}
				if isCJK(r) {
					cjk++
				}
			}
			if cjk > 0 && (cjk != len(rs) || len(rs) > 2) {
				t.Fatalf("term %q of %q mixes CJK with other letters or is longer than a bigram", term, text)
			}
		}
	})
}

// hanLine is a line of n bytes of Han text whose bigrams are mostly distinct: the worst case
// of a long CJK query against a library that knows none of them.
func hanLine(n int) string {
	var b strings.Builder
	x := uint32(1)
	for b.Len()+3 <= n {
		x = x*1664525 + 1013904223
		b.WriteRune(rune(0x4E00 + x>>16%0x5000))
	}
	return b.String()
}

// BenchmarkTokenizeHan tokenizes a 64 KB line of Han text, the largest query there is.
func BenchmarkTokenizeHan(b *testing.B) {
	line := hanLine(MaxQueryBytes)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		Tokenize(line)
	}
}

// BenchmarkQueryHan answers a 64 KB line of Han text on an English library: thousands of
// distinct unknown terms, which analyze must not compare pairwise.
func BenchmarkQueryHan(b *testing.B) {
	e := kitchen()
	req := Request{Query: hanLine(MaxQueryBytes)}
	b.SetBytes(int64(len(req.Query)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Query(req); err != nil {
			b.Fatal(err)
		}
	}
}
