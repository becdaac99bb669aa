// Package ingest reads skill libraries — SKILL.md trees and MCP tool catalogs — into Skills,
// reporting every bad entry without stopping.
//
// A library is loaded from paths: directories are searched for SKILL.md files, .json files hold
// an MCP tools/list result (or a bare array of tools), .jsonl/.ndjson files hold one tool a line,
// and a .md file given directly is one skill. Identity is the skill name. An entry that cannot be
// used (no front matter, broken YAML or JSON, empty name or description, a name that breaks the
// name rules, duplicate name, ...) is skipped and recorded as a Problem that names its file and
// line; loading goes on. Only regular files are read: a named pipe, device, socket or directory
// where a file should be, and a symlink that leads out of the library folder, are skipped with a
// Problem too, so that no entry can make Load hang. Only a path that cannot be read, an
// unsupported file type or a library with no skills at all stops Load.
//
// Results are deterministic: paths are read in the order given and directories in lexical order.
package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/jsontext"
)

// MaxFileSize is the largest file Load reads; larger files are skipped with a Problem.
const MaxFileSize = 4 << 20

// Kinds of Skill.
const (
	KindSkill = "skill" // from a SKILL.md file
	KindTool  = "tool"  // from an MCP tool catalog (JSON or JSONL)
)

// Field is one declared input or output of a skill or tool.
type Field struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Skill is one usable entry of a library: a SKILL.md skill or an MCP tool. Name and Description
// are never empty (both are trimmed); Name is unique within a Library.
type Skill struct {
	Name        string
	Title       string // optional: MCP "title" or front matter "title"
	Description string
	// Source names the file the skill came from within the library, slash-separated: relative
	// to the deepest folder holding every path given to Load, and starting with that folder's
	// name ("skills/pdf/SKILL.md" for /home/me/skills given alone, "sample/x/SKILL.md" for
	// graphs/sample or its skill folders). It is what artifacts keep, so no build machine's
	// paths travel with them, and the same files give the same Sources however they are given.
	Source string
	// Path is the file as reached from the path given to Load (filepath.Join(root, rel)),
	// slash-separated: where the skill can be read on this machine.
	Path string
	// Line is the 1-based line where the entry starts: 1 for SKILL.md, the line for JSONL, the
	// line of the tool object for JSON.
	Line int
	Kind string // KindSkill or KindTool
	Body string // the markdown body after the front matter, trimmed, LF line endings; "" for tools
	Tags []string
	// Inputs are the declared inputs: front matter `inputs`, or the properties of an MCP
	// inputSchema sorted by name with Required taken from the schema's required list.
	Inputs []Field
	// Outputs are front matter `outputs`, or the properties of an MCP outputSchema.
	Outputs []Field
	// DependsOn lists the names from front matter `depends_on` and `requires`, trimmed and
	// deduplicated, in the order given.
	DependsOn []string
	// SchemaText is, for tools, the property names and descriptions of the input and output
	// schemas (nested properties and items included, depth-limited) as flat text for lexical
	// indexing, one property a line; "" for SKILL.md.
	SchemaText string
}

// Problem is one bad entry: either skipped (a broken file, an empty name, a duplicate, ...) or,
// for a warning such as a malformed optional field, kept with the field ignored.
type Problem struct {
	File  string // path as in Skill.Path
	Line  int    // 1-based; 0 when unknown
	Field string // the offending field when there is one ("name", "description", "front matter", ...)
	Skill string // the skill name when known
	Msg   string
	// Warning marks a problem whose entry was kept (a malformed optional field ignored, a name
	// that breaks its convention); the others skipped their entry or file.
	Warning bool
}

// Error formats the problem as file[:line]: [field "f": ]msg.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		fmt.Fprintf(&b, "field %q: ", p.Field)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Library is the result of loading skill libraries.
type Library struct {
	// Skills are in read order: paths in the order given, files within a directory in lexical
	// order, tools in file order.
	Skills   []Skill
	Problems []Problem
}

// Options changes how LoadWith reads a library.
type Options struct {
	// Strict makes the first Problem (warnings included) a fatal error.
	Strict bool
}

// Load reads the skill libraries at paths with default Options. See LoadWith.
func Load(paths ...string) (*Library, error) {
	return LoadWith(Options{}, paths...)
}

// LoadWith reads every path into one Library:
//   - a directory is searched recursively for files named exactly SKILL.md, skipping hidden
//     directories and node_modules;
//   - a file ending in .json is an MCP tools/list result {"tools":[...]}, the JSON-RPC response
//     {"result":{"tools":[...]}}, or a bare JSON array of tools;
//   - a file ending in .jsonl or .ndjson holds one tool a line (blank lines skipped);
//   - a file named SKILL.md or ending in .md is one skill.
//
// Only regular files are opened. Inside a directory a symlinked SKILL.md is read when it leads to
// a regular file inside that directory, and a symlinked skill folder (one holding a SKILL.md) has
// its SKILL.md read wherever it leads; other symlinked folders are skipped with a Problem (see
// linkedFolder). A path given directly may be a symlink to a regular file anywhere.
//
// Bad entries are skipped and recorded in Library.Problems. The error, always prefixed
// "ingest: ", is returned for a path that does not exist or cannot be read or walked, a file of
// another kind, a library with no skills at all, and — when opt.Strict — the first Problem
// (which it wraps, for errors.As). For an empty library the Library is returned along with the
// error so its Problems can be reported; for other errors it is nil.
func LoadWith(opt Options, paths ...string) (*Library, error) {
	if len(paths) == 0 {
		return nil, errors.New("ingest: no paths given")
	}
	l := &loader{strict: opt.Strict, seen: map[string]bool{}, names: map[string]int{}, linked: map[string]bool{}}
	l.base = commonBase(paths)
	for _, p := range paths {
		if err := l.loadPath(p); err != nil {
			if errors.Is(err, errStop) {
				break
			}
			return nil, err
		}
		if l.stopped() {
			break
		}
	}
	if l.stopped() {
		return nil, fmt.Errorf("ingest: %w", l.lib.Problems[0])
	}
	if len(l.lib.Skills) == 0 {
		n := len(l.lib.Problems)
		plural := "s"
		if n == 1 {
			plural = ""
		}
		return &l.lib, fmt.Errorf("ingest: empty library: no skills found in %s (%d problem%s)",
			strings.Join(paths, ", "), n, plural)
	}
	return &l.lib, nil
}

// errStop ends a directory walk early in strict mode.
var errStop = errors.New("ingest: stop")

// fileKind is how a file is parsed.
type fileKind int

const (
	kindUnsupported fileKind = iota
	kindSkillMD
	kindJSON
	kindJSONL
)

func kindOf(path string) fileKind {
	base := filepath.Base(path)
	if base == "SKILL.md" {
		return kindSkillMD
	}
	switch strings.ToLower(filepath.Ext(base)) {
	case ".md":
		return kindSkillMD
	case ".json":
		return kindJSON
	case ".jsonl", ".ndjson":
		return kindJSONL
	}
	return kindUnsupported
}

type loader struct {
	strict bool
	lib    Library
	seen   map[string]bool // files already read, by Path
	names  map[string]int  // skill name → index in lib.Skills
	linked map[string]bool // skill folders read through a symlink, by real path
	base   string          // the folder Sources are relative to (commonBase); "" for none
}

func (l *loader) stopped() bool { return l.strict && len(l.lib.Problems) > 0 }

func (l *loader) loadPath(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if fi.IsDir() {
		return l.walk(p)
	}
	if kindOf(p) == kindUnsupported {
		return fmt.Errorf("ingest: %s: unsupported file type; want a directory of SKILL.md files, "+
			"a SKILL.md or .md file, a .json MCP tool list or array of tools, or a .jsonl/.ndjson file of tools", p)
	}
	if !fi.Mode().IsRegular() {
		l.loadFile(p, nil, notRegular(fi.Mode()), false)
		return nil
	}
	f, err := os.OpenFile(p, OpenFlags, 0)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	data, prob, err := readFile(f)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	l.loadFile(p, data, prob, false)
	return nil
}

// notRegular is the Problem of a file that is not a regular file.
func notRegular(m fs.FileMode) *Problem {
	return &Problem{Msg: "not a regular file: " + typeName(m) + "; skipped"}
}

// typeName names a file type for messages.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "irregular file"
}

func (l *loader) walk(root string) error {
	// WalkDir does not follow a symlinked root; a trailing separator makes it.
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !os.IsPathSeparator(root[len(root)-1]) {
		root += string(filepath.Separator)
	}
	// Files are opened through an os.Root of the folder, so that no symlink swapped in after the
	// checks below leads out of it.
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer r.Close()
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			l.lib.Problems = append(l.lib.Problems, Problem{File: filepath.ToSlash(path), Msg: "cannot read: " + pathErrText(err)})
			if l.stopped() {
				return errStop
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != root && skippedDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Name() != "SKILL.md" {
			if d.Type()&fs.ModeSymlink != 0 {
				l.linkedFolder(r, root, realRoot, path)
			}
		} else {
			data, prob := l.readInRoot(r, root, realRoot, path, d.Type())
			l.loadFile(path, data, prob, true)
		}
		if l.stopped() {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("ingest: %w", err)
	}
	return err
}

// commonBase is the deepest folder that holds every path given to Load (a folder given, or the
// folder of a file given), as an absolute path: Sources are named relative to it, so the same
// files give the same Sources however they were given (the library folder, its skill folders,
// its SKILL.md files, relative or absolute paths) and no path above it reaches an artifact. When
// the paths share nothing below the file system's root, it is "" (see source).
func commonBase(paths []string) string {
	base := ""
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return ""
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			abs = filepath.Dir(abs)
		}
		if i == 0 {
			base = abs
			continue
		}
		for base != filepath.Dir(base) {
			if rel, err := filepath.Rel(base, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
				break
			}
			base = filepath.Dir(base)
		}
	}
	if base == filepath.Dir(base) { // the root: nothing shared
		return ""
	}
	return base
}

// source is the Skill.Source of the file at path: the base folder's name and the path below it
// ("sample/heat-object/SKILL.md" for graphs/sample given alone). Without a common base, or for
// a file outside it, it is the file's folder's name and its own.
func (l *loader) source(path string) string {
	abs, err := filepath.Abs(path)
	if err == nil && l.base != "" {
		if rel, err := filepath.Rel(l.base, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.Base(l.base) + "/" + filepath.ToSlash(rel)
		}
	}
	return filepath.Base(filepath.Dir(filepath.Clean(path))) + "/" + filepath.Base(path)
}

// skippedDir reports whether the walk leaves out a folder of this name.
func skippedDir(name string) bool { return strings.HasPrefix(name, ".") || name == "node_modules" }

// linkedFolder handles a symlink the walk met at path, inside root (realRoot with its symlinks
// resolved), that is not named SKILL.md. WalkDir does not follow symlinks, and a library that
// links its skills in from elsewhere (~/.claude/skills/pdf -> ~/src/skills/pdf) must not lose
// them silently:
//   - a link to a skill folder (one holding a SKILL.md) has that SKILL.md read, wherever the
//     folder is, as path/SKILL.md; folders under it are not walked;
//   - a link to a folder the walk reaches anyway (a loop back to an ancestor, or a second name
//     for a folder of the library) is skipped with a Problem naming it;
//   - a link to another folder (a collection of skills) is skipped with a Problem that says to
//     give the folder as a library of its own: walking where a link leads could walk the
//     whole disk.
//
// A link to anything but a folder is not a skill and is left alone, as other files are.
func (l *loader) linkedFolder(r *os.Root, root, realRoot, path string) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return // a broken link to something not named SKILL.md: nothing of the library's
	}
	fi, err := os.Stat(target)
	if err != nil || !fi.IsDir() {
		return
	}
	src := filepath.ToSlash(filepath.Clean(path))
	skip := func(msg string) {
		l.lib.Problems = append(l.lib.Problems, Problem{File: src, Msg: "symlinked folder: " + msg + "; skipped"})
	}
	if rel, err := filepath.Rel(realRoot, target); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		reached := true
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			reached = reached && (part == "." || !skippedDir(part))
		}
		if reached {
			skip("leads to " + filepath.ToSlash(rel) + " of the same library, which is read as it is (a loop or a second name)")
			return
		}
	}
	if l.linked[target] {
		skip("leads to " + filepath.ToSlash(target) + ", already read through another link")
		return
	}
	info, err := os.Lstat(filepath.Join(target, "SKILL.md"))
	if err != nil {
		skip("leads to " + filepath.ToSlash(target) + ", which holds no SKILL.md; give a folder of skills as a LIBRARY of its own")
		return
	}
	l.linked[target] = true
	file := filepath.Join(path, "SKILL.md")
	if !info.Mode().IsRegular() {
		l.loadFile(file, nil, &Problem{Msg: "not a regular file: " + typeName(info.Mode()) + "; skipped"}, true)
		return
	}
	tr, err := os.OpenRoot(target)
	if err != nil {
		l.loadFile(file, nil, &Problem{Msg: "cannot read: " + pathErrText(err)}, true)
		return
	}
	defer tr.Close()
	f, err := tr.OpenFile("SKILL.md", OpenFlags, 0)
	if err != nil {
		l.loadFile(file, nil, &Problem{Msg: "cannot read: " + pathErrText(err)}, true)
		return
	}
	data, prob, err := readFile(f)
	if err != nil {
		prob = &Problem{Msg: "cannot read: " + pathErrText(err)}
	}
	l.loadFile(file, data, prob, true)
}

// loadFile parses one file's data, or records prob (whose File it fills in) when reading failed.
// walked marks a SKILL.md found in a library folder, whose folder name the Agent Skills spec
// wants equal to the skill's name: a name that follows the convention but not its folder gets a
// warning. (A file given directly is the user's choice, and a name off the convention has had
// its warning.)
func (l *loader) loadFile(path string, data []byte, prob *Problem, walked bool) {
	src := filepath.ToSlash(filepath.Clean(path))
	if l.seen[src] {
		return
	}
	l.seen[src] = true
	if prob != nil {
		prob.File = src
		l.lib.Problems = append(l.lib.Problems, *prob)
		return
	}
	var entries []entry
	var probs []Problem
	switch kindOf(path) {
	case kindSkillMD:
		entries, probs = parseSkillMD(data, src)
	case kindJSON:
		entries, probs = parseTools(data, src)
	case kindJSONL:
		entries, probs = parseToolsJSONL(data, src)
	}
	l.lib.Problems = append(l.lib.Problems, probs...)
	for _, e := range entries {
		e.skill.Path, e.skill.Source = src, l.source(path)
		if !l.add(e) || !walked || kindOf(path) != kindSkillMD || !isAgentSkillName(e.skill.Name) {
			continue
		}
		if dir := filepath.Base(filepath.Dir(path)); dir != e.skill.Name && dir != "." && !os.IsPathSeparator(dir[0]) {
			l.lib.Problems = append(l.lib.Problems, Problem{File: src, Line: e.nameLine, Field: "name", Skill: e.skill.Name, Warning: true,
				Msg: fmt.Sprintf("name %q differs from its folder %q (the Agent Skills spec wants them equal); kept", e.skill.Name, dir)})
		}
	}
}

// add appends e's skill unless its name is taken, in which case it records the duplicate and
// reports false.
func (l *loader) add(e entry) bool {
	s := e.skill
	if i, ok := l.names[s.Name]; ok {
		first := l.lib.Skills[i]
		where := first.Path
		if first.Kind == KindTool && first.Line > 0 {
			where += ":" + strconv.Itoa(first.Line)
		}
		l.lib.Problems = append(l.lib.Problems, Problem{
			File: s.Path, Line: e.nameLine, Field: fieldAt(e.at, "name"), Skill: s.Name,
			Msg: fmt.Sprintf("duplicate name %q: already defined in %s; skipped", s.Name, where),
		})
		return false
	}
	l.names[s.Name] = len(l.lib.Skills)
	l.lib.Skills = append(l.lib.Skills, s)
	return true
}

// entry is a parsed skill with the line of its name, for duplicate reports.
type entry struct {
	skill    Skill
	nameLine int
	at       string // the tool's place in its array where its line holds others (parseTool)
}

// fieldAt is field within at, the place of a tool in its array ("tools[3].name"), or field
// alone when at is empty.
func fieldAt(at, field string) string {
	switch {
	case at == "":
		return field
	case field == "":
		return at
	}
	return at + "." + field
}

func skillsOf(entries []entry) []Skill {
	if len(entries) == 0 {
		return nil
	}
	out := make([]Skill, len(entries))
	for i, e := range entries {
		out[i] = e.skill
	}
	return out
}

// readInRoot reads the file at path, found by walking root (realRoot with its symlinks
// resolved), through r. typ is the file's type as the walk saw it, without following a
// symlink. A file it cannot use gives a Problem (without File).
func (l *loader) readInRoot(r *os.Root, root, realRoot, path string, typ fs.FileMode) ([]byte, *Problem) {
	if typ&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, &Problem{Msg: "cannot read: broken symlink: " + pathErrText(err)}
		}
		if rel, err := filepath.Rel(realRoot, target); err != nil || !filepath.IsLocal(rel) {
			return nil, &Problem{Msg: "symlink leaves the library (to " + filepath.ToSlash(target) + "); skipped"}
		}
		fi, err := os.Stat(target)
		if err != nil {
			return nil, &Problem{Msg: "cannot read: " + pathErrText(err)}
		}
		typ = fi.Mode().Type()
	}
	if !typ.IsRegular() {
		return nil, notRegular(typ)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, &Problem{Msg: "cannot read: " + err.Error()}
	}
	f, err := r.OpenFile(rel, OpenFlags, 0)
	if err != nil {
		return nil, &Problem{Msg: "cannot read: " + pathErrText(err)}
	}
	data, prob, err := readFile(f)
	if err != nil {
		return nil, &Problem{Msg: "cannot read: " + pathErrText(err)}
	}
	return data, prob
}

// readFile reads and closes f, which must be a regular file of at most MaxFileSize bytes. A
// file of another type or a larger one gives a Problem (without File); a file that cannot be
// read gives an error.
func readFile(f *os.File) ([]byte, *Problem, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(fi.Mode()), nil
	}
	if fi.Size() > MaxFileSize {
		return nil, tooLarge(fi.Size()), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(int64(len(data))), nil
	}
	return data, nil, nil
}

func tooLarge(n int64) *Problem {
	return &Problem{Msg: fmt.Sprintf("file is larger than %d MiB (%d bytes or more); skipped", MaxFileSize>>20, n)}
}

// pathErrText is err without the path an *fs.PathError repeats.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// utf8Problem is the problem of data, the bytes of file, when they are not valid UTF-8: the
// line and column of the first byte that is not, which skips the file (or line). Decoders read
// such a byte as U+FFFD, or fail with their own words; every input says it the same way.
func utf8Problem(data []byte, file string) *Problem {
	i := jsontext.InvalidUTF8(data)
	if i < 0 {
		return nil
	}
	line := 1 + bytes.Count(data[:i], []byte("\n"))
	col := i - bytes.LastIndexByte(data[:i], '\n')
	return &Problem{File: file, Line: line, Msg: fmt.Sprintf("not valid UTF-8: byte 0x%02x at column %d", data[i], col)}
}
