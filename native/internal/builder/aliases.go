package builder

import (
	"strings"

	"github.com/caskg/caskg/wasm/engine"
)

// builtinAliases is caskg's own table of the words people use for software things beside the
// words skills are written in: file formats and the applications that open them, short names
// of products and services, common abbreviations. A user asks to "chart an excel sheet"; the
// skill says "xlsx". The builder indexes each skill's text under the aliases of its words
// (expandAliases), so the artifact carries the table and every host — browser, worker, wazero,
// the CLI — answers alike, with no table in the WebAssembly module.
//
// One rule a line, '#' starts a comment:
//
//	a, b, c      equivalent: a text with any of them is also indexed under the others
//	a b => c, d  a text with the phrase "a b" is also indexed under c and d (one way)
//
// Words are matched after Tokenize (lower case, stemmed, stop words dropped), so "Excel" and
// "excels" match "excel". One-way rules keep an ambiguous short word ("word", "py", "md") from
// being added to every text that happens to contain it.
const builtinAliases = `
# Office formats and the applications that open them.
xlsx, excel, xls
xlsx => spreadsheet, workbook, sheet
spreadsheet => sheet
pptx, powerpoint, ppt
pptx => slides, deck, presentation
presentation => slides, deck
docx, msword
docx => word, document
word document => docx
odt => document
ods => spreadsheet
odp => presentation
google sheets => spreadsheet
google docs => document
google slides => presentation
keynote => presentation
csv => comma, separated
tsv => tab, separated
epub => ebook
ipynb, jupyter
jupyter => notebook
latex, tex
markdown => md
yaml, yml
jpeg, jpg
tiff, tif
svg => vector
mp4 => video
mp3 => audio
wav => audio
png => image
ics => calendar

# Languages and runtimes.
javascript, js
typescript => ts
python => py
golang => go
node js => nodejs
nodejs => node
react => reactjs
vue => vuejs
ruby => rb
rust => rs
kotlin => kt
bash => shell, sh
zsh => shell
powershell => ps1

# Data stores.
postgresql, postgres
psql => postgresql
postgresql => sql
mysql => sql
sqlite, sqlite3
sqlite => sql
mongodb, mongo
database, db
elasticsearch => elastic
redis => cache

# Infrastructure and services.
kubernetes, k8s
kubectl => kubernetes
helm => kubernetes
docker => container
github, gh
github => git
gitlab => git
pull request => pr
continuous integration => ci
aws => amazon
s3 => aws
ec2 => aws
lambda => aws
bigquery => gcp
google cloud => gcp
youtube => yt
chatgpt => openai, gpt
gpt => openai
pytorch, torch
sklearn, scikit
numpy => np
huggingface => hf

# Abbreviations.
machine learning => ml
large language model => llm
llm => language, model
natural language processing => nlp
nlp => natural, language
optical character recognition => ocr
ocr => text, recognition
text to speech => tts
tts => speech
speech recognition => asr, stt
transcription => stt
retrieval augmented generation => rag
extract transform load => etl
user interface => ui
graphical user interface => gui
command line => cli
cli => command, line
regular expression => regex
regex, regexp
virtual machine => vm
search engine optimization => seo
infrastructure as code => iac
end to end => e2e
accessibility, a11y
internationalization, i18n
localization, l10n
authentication => auth
authorization => auth
configuration, config
environment => env
repository, repo
documentation => docs
application => app
`

// aliasRule is one rule of an alias table: a text holding the phrase from (terms, in order) is
// also indexed under the words to, whose terms are toTerms. The words themselves are added to
// the text, not their terms: Stem is not idempotent ("slides" → "slid" → "sli"), and the
// index must see what a query of the same word sees.
type aliasRule struct {
	from    []string
	to      []string
	toTerms []string
}

// aliasWords splits one side of a rule into its words that are one term each, and their terms.
func aliasWords(s string) (words, terms []string) {
	for _, w := range engine.Words(s) {
		if ts := engine.Tokenize(w); len(ts) == 1 {
			words, terms = append(words, w), append(terms, ts[0])
		}
	}
	return words, terms
}

// aliasTable maps a rule's first term to the rules that start with it.
type aliasTable map[string][]aliasRule

// parseAliases reads an alias table in the format of builtinAliases.
func parseAliases(text string) aliasTable {
	t := aliasTable{}
	add := func(from, to, toTerms []string) {
		if len(from) > 0 && len(to) > 0 {
			t[from[0]] = append(t[from[0]], aliasRule{from, to, toTerms})
		}
	}
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if l, r, ok := strings.Cut(line, "=>"); ok {
			to, terms := aliasWords(r)
			add(engine.Tokenize(l), to, terms)
			continue
		}
		var words, terms []string
		for w := range strings.SplitSeq(line, ",") {
			ws, ts := aliasWords(w)
			words, terms = append(words, ws...), append(terms, ts...)
		}
		for i := range terms {
			to := append(append([]string(nil), words[:i]...), words[i+1:]...)
			toTerms := append(append([]string(nil), terms[:i]...), terms[i+1:]...)
			add(terms[i:i+1], to, toTerms)
		}
	}
	return t
}

var defaultAliases = parseAliases(builtinAliases)

// expandAliases returns text followed by the terms the table adds to it and that it does not
// hold already, each once, or text itself when it adds none. Its own terms keep their
// frequencies; an added term counts once, so an alias never outweighs the word it stands for.
func (t aliasTable) expandAliases(text string) string {
	if len(t) == 0 || text == "" {
		return text
	}
	toks := engine.Tokenize(text)
	var have map[string]bool
	var added []string
	for i, tok := range toks {
		for _, r := range t[tok] {
			if !hasPhrase(toks[i:], r.from) {
				continue
			}
			if have == nil {
				have = make(map[string]bool, len(toks))
				for _, x := range toks {
					have[x] = true
				}
			}
			for j, x := range r.toTerms {
				if !have[x] {
					have[x] = true
					added = append(added, r.to[j])
				}
			}
		}
	}
	if len(added) == 0 {
		return text
	}
	return text + "\n" + strings.Join(added, " ")
}

// hasPhrase reports whether toks starts with phrase.
func hasPhrase(toks, phrase []string) bool {
	if len(toks) < len(phrase) {
		return false
	}
	for i, p := range phrase {
		if toks[i] != p {
			return false
		}
	}
	return true
}

// aliasDoc is d with each field followed by the aliases of its words (expandAliases), indexed at
// that field's weight. The body's aliases, of its indexed head, go after the schema text, which
// has the body's weight: after the body, the index's cut at BodyHeadRunes would drop them.
func aliasDoc(t aliasTable, d engine.Doc) engine.Doc {
	d.Name = t.expandAliases(d.Name)
	d.Description = t.expandAliases(d.Description)
	tags := make([]string, len(d.Tags))
	for i, tag := range d.Tags {
		tags[i] = t.expandAliases(tag)
	}
	d.Tags = tags
	d.Schema = t.expandAliases(d.Schema)
	head := engine.HeadRunes(d.Body, engine.BodyHeadRunes)
	if x := t.expandAliases(head); len(x) > len(head) {
		d.Schema += x[len(head):]
	}
	return d
}
