package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
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
		{"invalid UTF-8 separates", "ab\xffcd", []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Words(tt.in)); diff != "" {
				t.Errorf("Words(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"stop words only", "what is the and of it", nil},
		{"single letters dropped", "x y z", nil},
		{"question", "How do I parse the JSON files?", []string{"pars", "json", "fil"}},
		{"identifier with stop word", "heat_object_in_microwave", []string{"heat", "object", "microwav"}},
		{"camel with acronym", "The HTTPServer handles requests", []string{"http", "server", "handl", "request"}},
		{"inflections", "Running tests; stopped boxes", []string{"run", "test", "stop", "box"}},
		{"repeats kept", "tea tea Teas", []string{"tea", "tea", "tea"}},
		{"digits", "convert mp3s to wav at 44100 Hz", []string{"convert", "mp3s", "wav", "44100", "hz"}},
		{"non-ASCII words unstemmed", "café résumés 数据分析", []string{"café", "résumés", "数据分析"}},
		{"short words unchanged", "was its bus use", []string{"bus", "use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tokenize(tt.in)); diff != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
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
		{"digits", "mp3s", "mp3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
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
