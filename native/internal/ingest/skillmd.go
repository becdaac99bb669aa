package ingest

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

var bom = []byte("\ufeff")

// ParseSkillMD parses one SKILL.md file: YAML front matter between "---" lines, then a markdown
// body. file names the file in Problems and Skill.Source. It returns the skill (none when the
// file is unusable) and every problem found, warnings included. It never panics.
func ParseSkillMD(data []byte, file string) ([]Skill, []Problem) {
	entries, probs := parseSkillMD(data, file)
	return skillsOf(entries), probs
}

// frontMatter locates the front matter: yml is the YAML between the delimiter lines, body what
// follows the closing line, and yamlLine the file line of yml's first line. A non-empty msg
// says why there is no usable front matter.
func frontMatter(data []byte) (yml, body []byte, yamlLine int, msg string) {
	data = bytes.TrimPrefix(data, bom)
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !isDelim(first, false) {
		return nil, nil, 0, `missing front matter: the file must start with a "---" line`
	}
	if !found {
		return nil, nil, 0, `front matter not closed: no "---" line after the opening one`
	}
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		next := off + len(line) + 1
		if isDelim(line, true) {
			if next > len(rest) {
				next = len(rest)
			}
			return rest[:off], rest[next:], 2, ""
		}
		off = next
	}
	return nil, nil, 0, `front matter not closed: no "---" line after the opening one`
}

// isDelim reports whether line is a front matter delimiter ("---", or "..." when closing),
// ignoring trailing blanks and a CR.
func isDelim(line []byte, closing bool) bool {
	line = bytes.TrimRight(line, " \t\r")
	return string(line) == "---" || (closing && string(line) == "...")
}

var yamlLineRE = regexp.MustCompile(`\bline (\d+)`)

// rewriteYAMLError turns yaml.v3's YAML line numbers into file lines and returns the first.
func rewriteYAMLError(msg string, offset int) (string, int) {
	first := 0
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(m[len("line "):])
		if err != nil {
			return m
		}
		n += offset
		if first == 0 {
			first = n
		}
		return "line " + strconv.Itoa(n)
	})
	return msg, first
}

// firstBadLine returns the 1-based number of the first line of yml such that the lines up to
// it no longer parse, or 0 when every prefix parses (or yml is too long to search).
func firstBadLine(yml []byte) int {
	lines := bytes.SplitAfter(yml, []byte("\n"))
	if len(lines) > 400 {
		return 0 // quadratic search; very long front matter keeps yaml.v3's own line
	}
	for k := 1; k <= len(lines); k++ {
		if _, err := parseYAML(bytes.Join(lines[:k], nil)); err != nil {
			return k
		}
	}
	return 0
}

// parseYAML parses front matter into a node, turning a parser panic into an error.
func parseYAML(yml []byte) (doc yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	err = yaml.Unmarshal(yml, &doc)
	return doc, err
}

// fmParser collects the problems of one SKILL.md file.
type fmParser struct {
	file   string
	offset int // file line of YAML line 1, minus 1
	name   string
	probs  []Problem
	failed bool // a problem that skips the skill was found
}

func (p *fmParser) line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 1
	}
	return n.Line + p.offset
}

// fail records a problem that skips the skill.
func (p *fmParser) fail(n *yaml.Node, field, msg string) {
	p.failed = true
	p.probs = append(p.probs, Problem{File: p.file, Line: p.line(n), Field: field, Skill: p.name, Msg: msg})
}

// warn records a problem that keeps the skill.
func (p *fmParser) warn(n *yaml.Node, field, msg string) {
	p.probs = append(p.probs, Problem{File: p.file, Line: p.line(n), Field: field, Skill: p.name, Msg: msg, Warning: true})
}

func parseSkillMD(data []byte, file string) ([]entry, []Problem) {
	if p := utf8Problem(data, file); p != nil {
		return nil, []Problem{*p}
	}
	yml, body, yamlLine, msg := frontMatter(data)
	if msg != "" {
		return nil, []Problem{{File: file, Line: 1, Field: "front matter", Msg: msg}}
	}
	p := &fmParser{file: file, offset: yamlLine - 1}
	yml = bytes.ReplaceAll(yml, []byte("\r\n"), []byte("\n"))
	doc, err := parseYAML(yml)
	if err != nil {
		// yaml.v3 reports where the enclosing construct began, sometimes a line early; the
		// first prefix of the front matter that fails to parse ends at the offending line.
		bad := firstBadLine(yml)
		m, line := rewriteYAMLError(err.Error(), p.offset)
		if bad > 0 {
			line = bad + p.offset
			m = yamlLineRE.ReplaceAllString(m, "line "+strconv.Itoa(line))
		}
		if line == 0 {
			line = 1
		}
		return nil, []Problem{{File: file, Line: line, Field: "front matter", Msg: "broken yaml: " + m}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = resolve(root.Content[0])
	}
	values := map[string]*yaml.Node{} // the value node of each top-level key
	keys := map[string]*yaml.Node{}
	switch {
	case root.Kind == 0 || root.ShortTag() == "!!null":
		// empty front matter: the missing name and description are reported below
	case root.Kind != yaml.MappingNode:
		return nil, []Problem{{File: file, Line: p.line(root), Field: "front matter",
			Msg: "front matter is not a mapping of fields (got " + nodeKind(root) + ")"}}
	default:
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i]
			if prev, ok := keys[k.Value]; ok {
				return nil, []Problem{{File: file, Line: p.line(k), Field: k.Value,
					Msg: fmt.Sprintf("broken yaml: key %q already defined at line %d", k.Value, p.line(prev))}}
			}
			keys[k.Value] = k
			values[k.Value] = resolve(root.Content[i+1])
		}
	}

	var s Skill
	s.Kind = KindSkill
	s.Source, s.Path = file, file
	s.Line = 1
	nameLine := 1
	// Problems with a whole field point at its key's line.
	switch n, k := values["name"], keys["name"]; {
	case n == nil:
		p.fail(nil, "name", "missing name")
	case n.Kind != yaml.ScalarNode:
		p.fail(k, "name", "name is not a string (got "+nodeKind(n)+")")
	case n.ShortTag() == "!!null":
		p.fail(k, "name", "empty name")
	case n.ShortTag() != "!!str":
		p.fail(k, "name", fmt.Sprintf("name is not a string (got %s %s); quote it", nodeKind(n), n.Value))
	case strings.TrimSpace(n.Value) == "":
		p.fail(k, "name", "empty name")
	default:
		s.Name = strings.TrimSpace(n.Value)
		p.name = s.Name
		nameLine = p.line(k)
		if skip, warn := checkName(s.Name, KindSkill); skip != "" {
			p.fail(k, "name", skip)
		} else if warn != "" {
			p.warn(k, "name", warn)
		}
	}
	switch n, k := values["description"], keys["description"]; {
	case n == nil:
		p.fail(nil, "description", "missing description")
	case n.Kind != yaml.ScalarNode:
		p.fail(k, "description", "description is not a string (got "+nodeKind(n)+")")
	case n.ShortTag() == "!!null" || strings.TrimSpace(n.Value) == "":
		p.fail(k, "description", "empty description")
	default:
		s.Description = strings.TrimSpace(n.Value)
		if c := utf8.RuneCountInString(s.Description); c > maxDescriptionLen {
			p.warn(k, "description", fmt.Sprintf("description is %d characters, more than the Agent Skills spec's %d; kept whole", c, maxDescriptionLen))
		}
	}
	if p.failed {
		return nil, p.probs
	}

	if n, ok := values["title"]; ok {
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
			s.Title = strings.TrimSpace(n.Value)
		} else if n.ShortTag() != "!!null" {
			p.warn(keys["title"], "title", "title is not a string (got "+nodeKind(n)+"); ignored")
		}
	}
	if n, ok := values["tags"]; ok {
		s.Tags = p.stringList(keys["tags"], n, "tags", true)
	}
	if n, ok := values["inputs"]; ok {
		s.Inputs = p.fields(keys["inputs"], n, "inputs")
	}
	if n, ok := values["outputs"]; ok {
		s.Outputs = p.fields(keys["outputs"], n, "outputs")
	}
	var deps []string
	for _, key := range []string{"depends_on", "requires"} {
		if n, ok := values[key]; ok {
			deps = append(deps, p.stringList(keys[key], n, key, false)...)
		}
	}
	s.DependsOn = dedupe(deps)
	p.specFields(&s, keys, values)
	body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	s.Body = strings.ToValidUTF8(strings.TrimSpace(string(body)), "\uFFFD")
	return []entry{{skill: s, nameLine: nameLine}}, p.probs
}

// Limits of the Agent Skills spec that a skill may break with a warning.
const (
	maxDescriptionLen   = 1024 // characters
	maxCompatibilityLen = 500  // characters
)

// specFields checks the optional fields of the Agent Skills spec and Claude Code's, and keeps
// what helps ranking:
//   - when_to_use (Claude Code) is appended to the description, as Claude Code itself shows
//     it to the model: it says when the skill applies, which is what a task's words match;
//   - metadata's tags or keywords, when present, join the tags;
//   - license, compatibility and allowed-tools are checked for their type (and compatibility
//     for the spec's 500 characters) and not indexed: a license or a tool list says nothing
//     about the task a skill serves.
//
// A malformed field is a warning and is ignored; the skill is kept.
func (p *fmParser) specFields(s *Skill, keys, values map[string]*yaml.Node) {
	str := func(field string) (string, bool) {
		n, ok := values[field]
		if !ok || n.ShortTag() == "!!null" {
			return "", false
		}
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			p.warn(keys[field], field, field+" is not a string (got "+nodeKind(n)+"); ignored")
			return "", false
		}
		return strings.TrimSpace(n.Value), true
	}
	if w, ok := str("when_to_use"); ok && w != "" {
		s.Description += "\n\nWhen to use: " + w
	}
	str("license")
	if c, ok := str("compatibility"); ok && utf8.RuneCountInString(c) > maxCompatibilityLen {
		p.warn(keys["compatibility"], "compatibility", fmt.Sprintf("compatibility is %d characters, more than the Agent Skills spec's %d; kept", utf8.RuneCountInString(c), maxCompatibilityLen))
	}
	if n, ok := values["allowed-tools"]; ok {
		p.stringList(keys["allowed-tools"], n, "allowed-tools", false)
	}
	if m, ok := values["metadata"]; ok && m.ShortTag() != "!!null" {
		if m.Kind != yaml.MappingNode {
			p.warn(keys["metadata"], "metadata", "metadata is not a map (got "+nodeKind(m)+"); ignored")
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i].Value; k == "tags" || k == "keywords" {
				s.Tags = dedupe(append(s.Tags, p.stringList(m.Content[i], resolve(m.Content[i+1]), "metadata."+k, true)...))
			}
		}
	}
}

// resolve follows aliases to the node they name. Alias chains are short in valid YAML; the
// bound only guards against surprises.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n != nil && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// nodeKind names a node's kind for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a map"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "boolean"
		case "!!null":
			return "null"
		case "!!str":
			return "string"
		}
		return strings.TrimPrefix(n.ShortTag(), "!!")
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// stringList reads the value n of key: a string or a list of strings; splitComma splits a single string at commas.
// Items are trimmed; empty and repeated items are dropped.
func (p *fmParser) stringList(key, n *yaml.Node, field string, splitComma bool) []string {
	want := "want a string or a list of strings"
	if splitComma {
		want = "want a list or a comma-separated string"
	}
	var out []string
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		if splitComma {
			out = strings.Split(n.Value, ",")
		} else {
			out = []string{n.Value}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode {
				p.warn(item, field, want+"; ignored an item that is "+nodeKind(item))
				continue
			}
			if item.ShortTag() != "!!null" {
				out = append(out, item.Value)
			}
		}
	default:
		p.warn(key, field, want+" (got "+nodeKind(n)+"); ignored")
		return nil
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return dedupe(out)
}

// fields reads the value n of key, inputs or outputs: a list of names, a list of {name, type, description,
// required} maps, or a map from name to a description or to such a map (sorted by name).
func (p *fmParser) fields(key, n *yaml.Node, field string) []Field {
	var out []Field
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!null" {
			p.warn(key, field, "want a list or a map (got "+nodeKind(n)+"); ignored")
		}
		return nil
	case yaml.SequenceNode:
		for _, item := range n.Content {
			item = resolve(item)
			switch item.Kind {
			case yaml.ScalarNode:
				if name := strings.TrimSpace(item.Value); name != "" && item.ShortTag() != "!!null" {
					out = append(out, Field{Name: name})
				}
			case yaml.MappingNode:
				f, ok := p.fieldMap(item, field, "")
				if ok {
					out = append(out, f)
				}
			default:
				p.warn(item, field, "want a name or a map in each item (got "+nodeKind(item)+"); ignored")
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], resolve(n.Content[i+1])
			name := strings.TrimSpace(k.Value)
			if name == "" {
				p.warn(k, field, "an entry has an empty name; ignored")
				continue
			}
			switch v.Kind {
			case yaml.ScalarNode:
				f := Field{Name: name}
				if v.ShortTag() != "!!null" {
					f.Description = strings.TrimSpace(v.Value)
				}
				out = append(out, f)
			case yaml.MappingNode:
				if f, ok := p.fieldMap(v, field, name); ok {
					out = append(out, f)
				}
			default:
				p.warn(v, field, fmt.Sprintf("%q: want a description or a map (got %s); ignored", name, nodeKind(v)))
			}
		}
		slices.SortStableFunc(out, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	default:
		p.warn(key, field, "want a list or a map (got "+nodeKind(n)+"); ignored")
	}
	return out
}

// fieldMap reads a {name, type, description, required} map; name, when non-empty, is the name
// the map is filed under.
func (p *fmParser) fieldMap(m *yaml.Node, field, name string) (Field, bool) {
	f := Field{Name: name}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, resolve(m.Content[i+1])
		switch k {
		case "name", "type", "description":
			var s string
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() != "!!null":
				s = strings.TrimSpace(v.Value)
			case k == "type" && v.Kind == yaml.SequenceNode:
				var alts []string
				for _, t := range v.Content {
					if t = resolve(t); t.Kind == yaml.ScalarNode {
						alts = append(alts, strings.TrimSpace(t.Value))
					}
				}
				s = strings.Join(alts, "|")
			case v.Kind != yaml.ScalarNode:
				p.warn(v, field, fmt.Sprintf("%s is not a string (got %s); ignored", k, nodeKind(v)))
			}
			switch k {
			case "name":
				if name == "" {
					f.Name = s
				}
			case "type":
				f.Type = s
			case "description":
				f.Description = s
			}
		case "required":
			var b bool
			if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
				p.warn(v, field, "required is not a boolean; ignored")
			}
			f.Required = b
		}
	}
	if f.Name == "" {
		p.warn(m, field, "an entry has no name; ignored")
		return Field{}, false
	}
	return f, true
}

// dedupe drops empty and repeated strings, keeping the first of each in order.
func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}
