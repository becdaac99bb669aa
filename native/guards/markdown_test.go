package guards

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// root is the module root, from this package's folder.
const root = "../.."

// TestMarkdown parses every Markdown file of the repository as GitHub does (CommonMark with its
// tables) and fails on what renders wrong or leads nowhere: a code fence never closed, a fence
// with a language opened inside a code block (the sign of a block closed too late), a heading
// inside a code block without a language, a relative link to a file that is not there or to an
// anchor its page lacks, the same code-span row twice in a table, and a caskg command in a
// shell block that names a command or flag the CLI does not have. The flags are the commands'
// own flag sets, read from `caskg COMMAND -h`.
func TestMarkdown(t *testing.T) {
	files := map[string][]byte{}
	for _, rel := range fixture.MarkdownFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = b
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	flags := newCaskgFlags()
	problems := checkMarkdown(files, exists, flags)
	for _, p := range problems {
		t.Error(p)
	}
	// A parser that saw no blocks or a CLI whose help changed shape would pass on nothing.
	if len(files) < 12 || len(flags.commands) < 10 || flags.invocations < 20 {
		t.Errorf("%d Markdown files, %d commands, %d caskg command lines checked: want the README, docs/ and the reports, every command, the docs' examples",
			len(files), len(flags.commands), flags.invocations)
	}
}

// TestMarkdownChecks shows that each check fails on its kind of mistake and that clean text
// passes.
func TestMarkdownChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"clean", map[string]string{
			"README.md": "# caskg\n\nSee [the CLI](docs/cli.md#filters) and [below](#two-commands).\n\n## Two commands\n\n" +
				"```sh\nbin/caskg query bin/sample.skg \"heat some egg\" -k 6 --json\nclaude mcp add caskg -- /abs/bin/caskg mcp /abs/s.skg --library /abs/lib\n```\n\n" +
				"```text\n## When to use\n```\n\n````markdown\n```json\n{}\n```\n````\n",
			"docs/cli.md": "# CLI\n\n## Filters\n\n[Back](../README.md) and [the engine](../wasm/engine/).\n",
		}, nil},
		{"unclosed fence", map[string]string{"README.md": "# x\n\n```sh\nmake test\n"},
			[]string{"README.md:3: code fence ``` is never closed"}},
		{"fence opened inside a block: the gateway section pasted into the bundle's block", map[string]string{
			"README.md": "# x\n\n```\n[1] heat-object\n\n## Gateway: one MCP endpoint\n\nIt reads:\n\n```json\n{\"mcpServers\": {}}\n```\n\nmore text\n"},
			[]string{
				"README.md:6: heading \"## Gateway: one MCP endpoint\" inside the code block opened at line 3",
				"README.md:10: fence ```json inside the code block opened at line 3: that block is closed too late",
			}},
		{"heading in an untagged block", map[string]string{"README.md": "# x\n\n```\n# not a heading\n```\n"},
			[]string{"README.md:4: heading \"# not a heading\" inside the code block opened at line 3"}},
		{"broken file link", map[string]string{"README.md": "# x\n\nSee [docs](docs/nope.md).\n"},
			[]string{"README.md:3: link docs/nope.md: no file docs/nope.md"}},
		{"broken anchor", map[string]string{
			"README.md":   "# x\n\nSee [it](docs/cli.md#gateway) and [here](#y).\n",
			"docs/cli.md": "# CLI\n\n## Gateway: one endpoint\n",
		}, []string{
			"README.md:3: link docs/cli.md#gateway: docs/cli.md has no heading with anchor #gateway",
			"README.md:3: link #y: README.md has no heading with anchor #y",
		}},
		{"row twice: wasm/mcpcore/ listed twice", map[string]string{
			"docs/dev.md": "# x\n\n| folder | what |\n|---|---|\n| `wasm/mcpcore/` | tools |\n| `wasm/api/` | api |\n| `wasm/mcpcore/` | again |\n"},
			[]string{"docs/dev.md:7: table row `wasm/mcpcore/` twice (first at line 5)"}},
		{"flag mcp does not have", map[string]string{
			"README.md": "# x\n\n```sh\nbin/caskg mcp OUT.skg [--library DIR] [--feedback FILE [--feedback-query-text] [--feedback-tokens FILE]]\n```\n"},
			[]string{"README.md:4: caskg mcp has no flag --feedback-tokens"}},
		{"flag after --, with =, continued line, unknown command", map[string]string{
			"README.md": "# x\n\n```bash\n$ claude mcp add x -- /opt/caskg query a.skg \\\n   --kk=3 \"t\"\nFOO=1 caskg querry a.skg\ncaskg gateway rollback --state-dir d --relearn --http x\n```\n"},
			[]string{
				"README.md:4: caskg query has no flag --kk",
				"README.md:6: caskg has no command querry",
				"README.md:7: caskg gateway rollback has no flag --http",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for name, s := range tc.files {
				files[name] = []byte(s)
			}
			exists := func(rel string) bool {
				if _, ok := files[rel]; ok {
					return true
				}
				return rel == "wasm/engine" // a folder of the repository
			}
			got := checkMarkdown(files, exists, newCaskgFlags())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSynopsisNamesEveryCommand holds docs/cli.md's synopsis to the CLI: every command that
// `caskg help` lists has a line in it.
func TestSynopsisNamesEveryCommand(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, syn, ok := strings.Cut(string(src), "\n## Synopsis\n")
	if !ok {
		t.Fatal("docs/cli.md has no Synopsis section")
	}
	syn, _, _ = strings.Cut(syn, "\n## ")
	for _, c := range newCaskgFlags().commandNames() {
		if !strings.Contains(syn, "bin/caskg "+c+" ") {
			t.Errorf("docs/cli.md's synopsis has no line for caskg %s", c)
		}
	}
}

// TestReadmeIsAFrontDoor keeps README.md short enough to read at once: what caskg is, the two
// commands, the quick starts, one results table and links; the rest belongs in docs/.
func TestReadmeIsAFrontDoor(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n > 200 {
		t.Errorf("README.md has %d lines, want at most 200: move detail to a page of docs/", n)
	}
	for _, want := range []string{"make demo", "make test", "--render", "caskg serve", "caskg mcp", "caskg gateway", "<!-- eval:begin -->"} {
		if !bytes.Contains(src, []byte(want)) && !bytes.Contains(src, []byte(strings.Replace(want, "caskg ", "bin/caskg ", 1))) {
			t.Errorf("README.md does not show %q", want)
		}
	}
}

// TestDocsTableOfContents holds each page of docs/ but the records (recordPages) to a table of
// contents: a link to every section (## heading) from the page itself.
func TestDocsTableOfContents(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	pages := 0
	for _, rel := range fixture.MarkdownFiles(t, root) {
		if !strings.HasPrefix(rel, "docs/") || recordPages[rel] {
			continue
		}
		pages++
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		d := &mdDoc{name: rel, src: src, root: md.Parser().Parse(text.NewReader(src)), lines: lineStarts(src)}
		for _, h := range headingAnchors(d) {
			if h.level == 2 && !bytes.Contains(src, []byte("](#"+h.anchor+")")) {
				t.Errorf("%s: the table of contents has no link to #%s", rel, h.anchor)
			}
		}
	}
	if pages < 10 {
		t.Errorf("%d pages in docs/, want one per surface", pages)
	}
}

// checkMarkdown returns the problems of files (path relative to the repository → contents),
// each "path:line: what". exists reports whether a path relative to the repository is there.
func checkMarkdown(files map[string][]byte, exists func(string) bool, flags *caskgFlags) []string {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	docs := map[string]*mdDoc{}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		src := files[name]
		docs[name] = &mdDoc{name: name, src: src, root: md.Parser().Parse(text.NewReader(src)), lines: lineStarts(src)}
		docs[name].anchors = anchors(docs[name])
	}
	var problems []string
	for _, name := range names {
		d := docs[name]
		report := func(pos int, format string, a ...any) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s", name, d.line(pos), fmt.Sprintf(format, a...)))
		}
		ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.FencedCodeBlock:
				checkFence(d, n, report)
				if lang := string(n.Language(d.src)); isShell(lang) {
					for _, c := range shellCommands(d, n) {
						for _, msg := range flags.check(c.words) {
							report(c.pos, "%s", msg)
						}
					}
				}
			case *ast.Link:
				checkLink(d, docs, string(n.Destination), n.Pos(), exists, report)
			case *ast.Image:
				checkLink(d, docs, string(n.Destination), n.Pos(), exists, report)
			case *east.Table:
				checkRows(d, n, report)
			}
			return ast.WalkContinue, nil
		})
	}
	return problems
}

// An mdDoc is one parsed Markdown file.
type mdDoc struct {
	name    string
	src     []byte
	root    ast.Node
	lines   []int // offset of each line's start
	anchors map[string]bool
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line is the 1-based line of offset pos.
func (d *mdDoc) line(pos int) int {
	i, found := slices.BinarySearch(d.lines, pos)
	if found {
		return i + 1
	}
	return i
}

// text is the text of the 1-based line n without its newline ("" past the end).
func (d *mdDoc) text(n int) (string, bool) {
	if n < 1 || n > len(d.lines) || d.lines[n-1] >= len(d.src) {
		return "", false
	}
	end := len(d.src)
	if n < len(d.lines) {
		end = d.lines[n] - 1
	}
	return string(d.src[d.lines[n-1]:end]), true
}

// containerPrefix matches what block quotes and list indentation put before a line's content.
var containerPrefix = regexp.MustCompile(`^[ \t>]*`)

// fenceOf returns the fence a line opens or closes (``` or ~~~, any length) and what follows it.
func fenceOf(line string) (fence, rest string) {
	line = containerPrefix.ReplaceAllString(line, "")
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return "", ""
	}
	i := 0
	for i < len(line) && line[i] == line[0] {
		i++
	}
	if i < 3 {
		return "", ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// checkFence reports a fenced block that is never closed, a fence with an info string inside it
// (CommonMark reads it as content: the block was meant to close before), and, in a block without a
// language or in Markdown, a line that would be a heading outside it.
func checkFence(d *mdDoc, n *ast.FencedCodeBlock, report func(int, string, ...any)) {
	open := d.line(n.Pos())
	openText, _ := d.text(open)
	fence, _ := fenceOf(openText)
	last := open
	if l := n.Lines(); l.Len() > 0 {
		last = d.line(l.At(l.Len() - 1).Start)
	}
	closing, ok := d.text(last + 1)
	if f, rest := fenceOf(closing); !ok || rest != "" || f == "" || f[0] != fence[0] || len(f) < len(fence) {
		report(n.Pos(), "code fence %s is never closed", fence)
	}
	lang := string(n.Language(d.src))
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(d.src)), "\n")
		if f, rest := fenceOf(line); f != "" && rest != "" && f[0] == fence[0] && len(f) >= len(fence) {
			report(seg.Start, "fence %s inside the code block opened at line %d: that block is closed too late", f+rest, open)
		}
		if (lang == "" || lang == "md" || lang == "markdown") && atxHeading.MatchString(line) {
			report(seg.Start, "heading %q inside the code block opened at line %d", line, open)
		}
	}
}

var atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(\s|$)`)

// checkLink reports a relative link whose file is missing, or whose anchor its Markdown page lacks.
func checkLink(d *mdDoc, docs map[string]*mdDoc, dest string, pos int, exists func(string) bool, report func(int, string, ...any)) {
	u, err := url.Parse(dest)
	if err != nil {
		report(pos, "link %s: %v", dest, err)
		return
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "//") {
		return
	}
	target := d.name
	if u.Path != "" {
		target = path.Clean(path.Join(path.Dir(d.name), u.Path))
		if strings.HasPrefix(target, "../") || target == ".." {
			report(pos, "link %s: leads out of the repository", dest)
			return
		}
		if _, ok := docs[target]; !ok && !exists(target) {
			report(pos, "link %s: no file %s", dest, target)
			return
		}
	}
	if u.Fragment == "" {
		return
	}
	if t, ok := docs[target]; ok && !t.anchors[u.Fragment] {
		report(pos, "link %s: %s has no heading with anchor #%s", dest, target, u.Fragment)
	}
}

// anchors returns the anchors GitHub gives a page's headings (headingAnchors), and the explicit
// <a name> and id anchors.
func anchors(d *mdDoc) map[string]bool {
	out := map[string]bool{}
	for _, h := range headingAnchors(d) {
		out[h.anchor] = true
	}
	for _, m := range htmlAnchor.FindAllSubmatch(d.src, -1) {
		out[string(m[1])] = true
	}
	return out
}

// A heading is one heading of a page: its level and the anchor GitHub gives it.
type heading struct {
	level  int
	anchor string
}

// headingAnchors returns a page's headings with their anchors as GitHub makes them: the
// heading's text in lower case, with what is neither a letter, a digit, a mark, a space, '-' nor
// '_' dropped and each space a '-'; a repeated anchor gets -1, -2, ...
func headingAnchors(d *mdDoc) []heading {
	seen := map[string]int{}
	var out []heading
	ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			var b strings.Builder
			for _, r := range strings.ToLower(plainText(h, d.src)) {
				switch {
				case r == ' ':
					b.WriteByte('-')
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
					b.WriteRune(r)
				}
			}
			a := b.String()
			if k := seen[a]; k > 0 {
				seen[a]++
				a = fmt.Sprintf("%s-%d", a, k)
			} else {
				seen[a] = 1
			}
			out = append(out, heading{h.Level, a})
		}
		return ast.WalkContinue, nil
	})
	return out
}

var htmlAnchor = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)

// plainText is the text of an inline tree as GitHub reads it for an anchor: code spans' and
// links' text included, markup left out.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// checkRows reports a table row whose first cell, a code span such as a folder, repeats an
// earlier row's: a layout table lists each thing once.
func checkRows(d *mdDoc, tbl *east.Table, report func(int, string, ...any)) {
	first := map[string]int{}
	for row := tbl.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableRow); !ok {
			continue
		}
		cell := row.FirstChild()
		if cell == nil {
			continue
		}
		if _, ok := cell.FirstChild().(*ast.CodeSpan); !ok {
			continue
		}
		text := strings.TrimSpace(string(d.src[d.lines[d.line(row.Pos())-1]:]))
		text, _, _ = strings.Cut(text, "\n")
		key := strings.TrimSpace(strings.Split(strings.Trim(text, "|"), "|")[0])
		line := d.line(row.Pos())
		if at, ok := first[key]; ok {
			report(row.Pos(), "table row %s twice (first at line %d)", key, at)
			continue
		}
		first[key] = line
	}
}

func isShell(lang string) bool {
	switch lang {
	case "sh", "bash", "shell", "console", "zsh":
		return true
	}
	return false
}

// A shellCommand is the words of one command of a shell block and where it starts.
type shellCommand struct {
	pos   int
	words []string
}

// shellCommands splits a shell block into its commands: lines joined at a trailing backslash, a
// "$ " prompt and comments dropped, commands cut at ; | & and $( ), words split as the shell
// does with quotes.
func shellCommands(d *mdDoc, n *ast.FencedCodeBlock) []shellCommand {
	var out []shellCommand
	lines := n.Lines()
	var cur string
	start := -1
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(d.src)), "\n")
		if start < 0 {
			start = seg.Start
			line = strings.TrimPrefix(strings.TrimLeft(line, " "), "$ ")
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		cur += line
		for _, words := range splitShell(cur) {
			out = append(out, shellCommand{start, words})
		}
		cur, start = "", -1
	}
	return out
}

// splitShell returns the commands of one shell line, each as its words.
func splitShell(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	end := func() {
		flush()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '#' && !inWord:
			end()
			return cmds
		case c == ' ' || c == '\t':
			flush()
		case c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '`' || c == '<' || c == '>':
			end()
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			end()
			i++
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return cmds
}

// caskgFlags knows the caskg commands and their flags from the CLI itself: the commands from
// `caskg help`, each command's flags from `caskg COMMAND -h` (its flag set's PrintDefaults), and
// a second word such as `traces import` as a command of its own when `-h` after it prints its
// own usage.
type caskgFlags struct {
	commands    []string
	invocations int                 // caskg command lines checked
	flags       map[string][]string // "query", "gateway rollback" → flag names
}

func newCaskgFlags() *caskgFlags {
	f := &caskgFlags{flags: map[string][]string{}}
	var out bytes.Buffer
	cli.Run([]string{"help"}, &out, io.Discard)
	for _, line := range strings.Split(out.String(), "\n") {
		if m := helpCommand.FindStringSubmatch(line); m != nil {
			f.commands = append(f.commands, m[1])
		}
	}
	return f
}

var (
	helpCommand = regexp.MustCompile(`^  ([a-z]+) `)
	flagLine    = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_-]*)`)
)

func (f *caskgFlags) commandNames() []string { return f.commands }

// flagsOf returns the flags of a command given as its words ("traces", "import"), and whether
// the CLI knows it.
func (f *caskgFlags) flagsOf(words ...string) ([]string, bool) {
	key := strings.Join(words, " ")
	if fl, ok := f.flags[key]; ok {
		return fl, fl != nil
	}
	var out bytes.Buffer
	code := cli.Run(append(slices.Clone(words), "-h"), &out, io.Discard)
	first, _, _ := strings.Cut(out.String(), "\n")
	if code != 0 || !strings.HasPrefix(first, "usage: caskg "+key+" ") {
		f.flags[key] = nil
		return nil, false
	}
	fl := []string{"h", "help"}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			fl = append(fl, m[1])
		}
	}
	f.flags[key] = fl
	return fl, true
}

// check returns what is wrong with the caskg invocations among one command's words: a caskg
// program (any path ending in caskg) run as the command, or after "--" (as `claude mcp add NAME --
// /path/caskg ...` runs it), with a command the CLI lacks or a flag that command lacks.
func (f *caskgFlags) check(words []string) []string {
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:] // VAR=value before the program
	}
	var problems []string
	for i, w := range words {
		if path.Base(w) != "caskg" || (i > 0 && words[i-1] != "--") {
			continue
		}
		args := words[i+1:]
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			continue // caskg alone, or caskg --help
		}
		f.invocations++
		if !slices.Contains(f.commands, args[0]) {
			problems = append(problems, "caskg has no command "+args[0])
			continue
		}
		cmd := args[:1]
		if len(args) > 1 && isWord(args[1]) {
			if _, ok := f.flagsOf(args[0], args[1]); ok {
				cmd = args[:2]
			}
		}
		known, _ := f.flagsOf(cmd...)
		for _, a := range args[len(cmd):] {
			a = strings.TrimLeft(strings.TrimRight(a, "]"), "[")
			if a == "--" {
				break
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !slices.Contains(known, name) {
				dashes := a[:len(a)-len(strings.TrimLeft(a, "-"))]
				problems = append(problems, fmt.Sprintf("caskg %s has no flag %s%s", strings.Join(cmd, " "), dashes, name))
			}
		}
		break
	}
	return problems
}

// isWord reports whether s could be a subcommand's name: lower-case letters only.
func isWord(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}
