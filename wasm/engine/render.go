package engine

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs/errtext"
)

// The rendered bundle is the text an agent reads: the top skills' own text within a
// character budget, so a host can put it straight into a prompt. Every host gets it from here,
// so the CLI, the WASM API and the MCP server hand out the same text for the same request.
//
// Budgets count characters as Unicode code points. TotalBudget bounds the whole text, header
// and separators included; SkillBudget bounds each skill's section. The layout:
//
//	8 skills for this task, most relevant first.
//	Task: heat some egg and put it in the garbage can
//	Why: ... (what "seed", "via graph" and "match" mean)
//	Text marked [… cut] goes on in the skill's source file.
//
//	[1] heat-object-in-microwave (seed #1)
//	Warm a held food or drink item in the microwave and take it back out once it is hot.
//	source: graphs/sample/heat-object-in-microwave/SKILL.md
//	- needs pick-up-object (confirmed dependency, w=0.73)
//	- recalled: 14 past runs (heat, egg)     ← when the memory of past tasks raised it
//
//	## When to use                 ← the body head, cut at a line boundary when it must be cut
//	...
//	[… cut]
//
//	[2] ...
//
// Space is shared out in tiers, each in rank order: headings, descriptions, evidence and
// source lines, body heads; so every result is named and described before any body is shown.
// From the first skill whose heading no longer fits, the skills are named in a closing line
// instead, for which some room is kept. The text is always valid UTF-8 and ends in a newline;
// the same request gives the same text.

// Rendering defaults and limits, in characters.
const (
	DefaultSkillBudget = 2400
	DefaultTotalBudget = 12000
	MaxBudget          = 1 << 20
	maxTaskRunes       = 200 // of the task text quoted in the header
	minClipRunes       = 24  // a body head or description cut shorter than this is left out
	leftOutReserve     = 160 // room kept for naming the skills left out
)

const cutMark = "[… cut]"

// Evidence describes a published edge from the result's side in a few words, e.g.
// "needed by heat-object-in-microwave (confirmed dependency, w=0.73)".
func (v Via) Evidence() string {
	return v.relation() + " " + v.From + " (" + v.State + " " + v.Type + ", w=" + strconv.FormatFloat(float64(v.Weight), 'f', 2, 32) + ")"
}

// relation says how the result stands to v.From. A published edge u→v means u comes first: for
// a dependency, v needs u; for a workflow, v follows u. Reverse flips the roles.
func (v Via) relation() string {
	switch v.Type {
	case "dependency":
		if v.Reverse {
			return "needed by"
		}
		return "needs"
	case "semantic":
		return "similar to"
	case "alternative":
		return "alternative to"
	}
	if v.Reverse {
		return "before"
	}
	return "after"
}

// section is one skill's part of the bundle.
type section struct {
	heading, desc, source string
	evidence              []string
	body                  string // body head, possibly cut; "" for none
	cut                   bool   // body was cut
	runes                 int    // of the section so far
}

// String joins the lines by concatenation: strings.Join or a strings.Builder, whose writes are
// inlined, would cost the WebAssembly module 2–3 KB.
func (s *section) String() string {
	text := s.heading
	for _, l := range [...]string{s.desc, s.source} {
		if l != "" {
			text += "\n" + l
		}
	}
	for _, l := range s.evidence {
		text += "\n" + l
	}
	if s.body != "" {
		text += "\n\n" + s.body
		if s.cut {
			text += "\n" + cutMark
		}
	}
	return text
}

// render lays out res for req within req's budgets. req is normalized.
//
// Space goes out in tiers, each in rank order, so that a smaller budget drops the least useful
// text first: headings; descriptions; evidence and source lines; body heads.
func (e *Engine) render(req *Request, res []Result, note string) string {
	g := e.g
	// The text is the header, then each block after a blank line, then a final newline.
	header := clipRunes(renderHeader(req, res, note), req.TotalBudget-1)
	left := req.TotalBudget - runeCount(header) - 1
	const sep = 2 // "\n\n" before each block
	// take spends n characters of section s if both its skill budget and the total allow.
	take := func(s *section, n int) bool {
		if s.runes+n > req.SkillBudget || n > left {
			return false
		}
		s.runes += n
		left -= n
		return true
	}

	// Headings, until one does not fit. Room is kept to name the skills after each one, should
	// they be left out.
	var secs []*section
	for i, r := range res {
		reserve := 0
		if i+1 < len(res) {
			reserve = sep + runeCount(leftOutLine(res[i+1:], leftOutReserve))
		}
		heading := "[" + errtext.Itoa(i+1) + "] " + oneLine(g.Name(r.ID), MaxBudget) + " (" + Why(r) + ")"
		n := runeCount(heading)
		if n > req.SkillBudget || sep+n+reserve > left {
			break
		}
		secs = append(secs, &section{heading: heading, runes: n})
		left -= sep + n
	}
	var footer string
	if len(secs) < len(res) {
		if footer = leftOutLine(res[len(secs):], left-sep); footer != "" {
			left -= sep + runeCount(footer)
		}
	}
	// Descriptions, each clipped to fit when enough of it does.
	for i, s := range secs {
		desc := oneLine(g.Description(res[i].ID), MaxBudget)
		room := min(req.SkillBudget-s.runes, left) - 1
		if n := runeCount(desc); desc == "" || n > room && (room < minClipRunes || n <= minClipRunes) {
			continue
		}
		s.desc = clipRunes(desc, room)
		take(s, 1+runeCount(s.desc))
	}
	// Evidence, then the source, each line whole or not at all.
	for i, s := range secs {
		add := func(ev string) {
			if line := "- " + oneLine(ev, MaxBudget); take(s, 1+runeCount(line)) {
				s.evidence = append(s.evidence, line)
			}
		}
		for _, v := range res[i].Via {
			add(v.Evidence())
		}
		if rc := res[i].Recalled; rc != nil {
			add(rc.Evidence())
		}
		if src := oneLine(g.Source(res[i].ID), MaxBudget); src != "" {
			if line := "source: " + src; take(s, 1+runeCount(line)) {
				s.source = line
			}
		}
	}
	// Body heads, each whole or cut to what is left, preferably at a line break.
	for i, s := range secs {
		room := min(req.SkillBudget-s.runes, left) - sep
		if room < minClipRunes {
			continue
		}
		body := trimRight(trimLeft(cleanText(g.Body(res[i].ID)), unicode.IsSpace), unicode.IsSpace)
		if body == "" {
			continue
		}
		if n := runeCount(body); n <= room {
			take(s, sep+n)
			s.body = body
			continue
		}
		markCost := 1 + runeCount(cutMark) // "\n" + mark
		cut := cutText(body, room-markCost)
		if runeCount(cut) < minClipRunes {
			continue
		}
		take(s, sep+runeCount(cut)+markCost)
		s.body, s.cut = cut, true
	}

	// The text is appended to a byte slice, as in leftOutLine and cleanText, not written to a
	// strings.Builder: its writes are inlined and its Grow links bytealg.MakeNoZero, and the
	// three Builders cost the WebAssembly module 8.4 KB raw and 3.7 KB gzip, for one copy of
	// the text saved.
	b := append([]byte(nil), header...)
	for _, s := range secs {
		b = append(b, "\n\n"...)
		b = append(b, s.String()...)
	}
	if footer != "" {
		b = append(b, "\n\n"...)
		b = append(b, footer...)
	}
	return string(append(b, '\n'))
}

func renderHeader(req *Request, res []Result, note string) string {
	task := "Task: " + oneLine(req.Query, maxTaskRunes)
	if note != "" {
		task += "\nNote: " + note + "."
	}
	if len(res) == 0 {
		return "No skills found for this task.\n" + task
	}
	count := errtext.Itoa(len(res)) + " skills for this task, most relevant first."
	if len(res) == 1 {
		count = "1 skill for this task."
	}
	why := "Why: a seed matches the task best; via graph: an edge from a seed raised the skill; " +
		"a match matches the task below the seeds, no edge raised it. Under each skill, the edges " +
		"that link it to the others, with calibration state and weight."
	if req.NoGraph {
		why = "Why: each skill matches the task (the skill graph was not used)."
	}
	// Said only when it applies: a line no result has would be noise in the prompt.
	for _, r := range res {
		if r.Recalled != nil {
			why += " Recalled: past runs whose tasks shared these words used the skill."
			break
		}
	}
	return count + "\n" + task + "\n" + why + "\nText marked " + cutMark + " goes on in the skill's source file."
}

// Why names the evidence that put r in the answer, in the words every door prints: "seed #N",
// "via graph" when an edge from a seed raised its score (Result.Graph), "recalled" when the
// memory of past tasks raised it (Result.Recalled), and "match" for a skill the task matches as
// it does a seed, below the seed cut, that neither raised.
func Why(r Result) string {
	switch {
	case r.SeedRank > 0:
		return "seed #" + errtext.Itoa(r.SeedRank)
	case r.Graph:
		return "via graph"
	case r.Recalled != nil:
		return "recalled"
	}
	return "match"
}

// leftOutLine names the skills that did not fit, within budget characters: all of them when
// they fit, else as many as fit followed by "…"; "" when not even their count fits.
func leftOutLine(rest []Result, budget int) string {
	line := leftOutCount(len(rest))
	if runeCount(line) > budget {
		return ""
	}
	// "[N more ... budget: a, b, …]": the names that fit, in rank order, appended to a byte
	// slice rather than a strings.Builder for the module's size (render). append([]byte(nil),
	// head...) rather than []byte(head), which links two more runtime functions.
	head := strings.TrimSuffix(line, "]") + ": "
	used := runeCount(head)
	b := append([]byte(nil), head...)
	for i, r := range rest {
		name := oneLine(r.Name, MaxBudget)
		sepLen := 0
		if i > 0 {
			sepLen = 2
		}
		tail := 1 // "]"
		if i+1 < len(rest) {
			tail = 4 // ", …]"
		}
		n := runeCount(name)
		if used+sepLen+n+tail > budget {
			if i == 0 {
				return line
			}
			return string(append(b, ", …]"...))
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
		used += sepLen + n
	}
	return string(append(b, ']'))
}

func leftOutCount(n int) string {
	if n == 1 {
		return "[1 more skill left out by the budget]"
	}
	return "[" + errtext.Itoa(n) + " more skills left out by the budget]"
}

// cutText returns a prefix of s of at most n runes, ending at a line break when one falls in
// the second half of the prefix, else at a space there, else at a rune boundary; trailing
// white space is dropped.
func cutText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if runeCount(s) <= n {
		return s
	}
	p := s[:runeOffset(s, n)]
	if i := strings.LastIndexByte(p, '\n'); i >= len(p)/2 {
		p = p[:i]
	} else if i := strings.LastIndexByte(p, ' '); i >= len(p)/2 {
		p = p[:i]
	}
	return trimRight(p, unicode.IsSpace)
}

// clipRunes shortens s to at most n runes, ending in "…" when it cut.
func clipRunes(s string, n int) string {
	switch {
	case runeCount(s) <= n:
		return s
	case n <= 0:
		return ""
	case n == 1:
		return "…"
	}
	return trimRight(s[:runeOffset(s, n-1)], unicode.IsSpace) + "…"
}

// oneLine collapses white space and control characters in s to single spaces and clips it to n
// runes. It is clipRunes(strings.Join(strings.Fields(t), " "), n) of t, cleanText(s) with every
// control character made a space, written as one pass: strings.Map, Fields and Join cost the
// WebAssembly module 8 KB.
func oneLine(s string, n int) string {
	s = cleanText(s)
	var b []byte
	start := -1 // of the word being read
	// One pass to len(s), which reads as a space and ends the last word, so that a word is
	// copied at one place.
	for i, size := 0, 0; i <= len(s); i += size {
		r := rune(' ')
		size = 1
		if i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if !unicode.IsSpace(r) && !unicode.IsControl(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start < 0 {
			continue
		}
		if start == 0 && i == len(s) {
			break // one word, nothing to collapse
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		} else {
			b = append(b, ' ')
		}
		b = append(b, s[start:i]...)
		start = -1
	}
	if start != 0 {
		s = string(b)
	}
	return clipRunes(s, n)
}

// cleanText makes s valid UTF-8 so that rune counts are exact, and drops carriage returns:
// strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r", ""), written out as one pass
// because those two functions cost the WebAssembly module several KB.
func cleanText(s string) string {
	if strings.IndexByte(s, '\r') < 0 && utf8.ValidString(s) {
		return s
	}
	// A byte slice rather than a strings.Builder, for the module's size (render).
	b := make([]byte, 0, len(s))
	invalid := false // inside a run of invalid bytes, which becomes one U+FFFD
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c != '\r' {
				b = append(b, c)
			}
			i++
			invalid = false
			continue
		}
		if _, n := utf8.DecodeRuneInString(s[i:]); n > 1 {
			b = append(b, s[i:i+n]...)
			i += n
			invalid = false
			continue
		}
		if !invalid {
			b = append(b, "\uFFFD"...)
			invalid = true
		}
		i++
	}
	return string(b)
}

// runeCount is not inlined: called from many places, inlined it would grow the WebAssembly
// module.
//
//go:noinline
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// runeOffset is the byte offset of s's n-th rune (len(s) when s is shorter).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
