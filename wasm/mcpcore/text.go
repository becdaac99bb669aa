package mcpcore

import (
	"strconv"
	"strings"

	"github.com/caskg/caskg/wasm/engine"
)

// The texts the tools answer with, shared by both servers so an agent reads the same words
// from `caskg mcp` and from the edge worker.

// listText is the short form of a ranking: one line a skill with its evidence, after the
// engine's note (engine.Response.Note) when it has one.
func listText(results []Skill, note string) string {
	if note != "" {
		note = "Note: " + note + ".\n"
	}
	if len(results) == 0 {
		return "No skills found for this task.\n" + note
	}
	var b strings.Builder
	b.WriteString(note)
	for _, r := range results {
		why := engine.Why(engine.Result{SeedRank: r.SeedRank, Graph: r.Graph})
		b.WriteString(strconv.Itoa(r.Rank) + ". " + r.Name + " (" + why + "): " + oneLine(r.Description) + "\n")
		for _, v := range r.Via {
			b.WriteString("   - " + v.Evidence() + "\n")
		}
		if r.Recalled != nil {
			b.WriteString("   - " + r.Recalled.Evidence() + "\n")
		}
	}
	return b.String()
}

// headText is get_skill's text from the graph alone: the skill's description and the head of
// its body, then note in brackets (why it is not the whole file).
func headText(name, description, body, note string) (text, full string) {
	var b strings.Builder
	b.WriteString("# " + name + "\n\n" + description + "\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString("\n" + body + "\n")
	}
	text = b.String()
	return text, text + "\n[" + note + "]\n"
}

// headNote is the note of a headText: source is the artifact's source path, why the reason.
func headNote(source, why string) string {
	return "This is the description and the head of the body stored in the graph, not the whole file; the source was " +
		source + ". " + why
}

// NoLibrary is headNote's reason on a server without a library folder.
const NoLibrary = "The server has no library folder (start it with --library DIR for whole files)."

// Edge is one published edge seen from the asked skill, as skill_neighbors lists it.
type Edge struct {
	Skill    string  `json:"skill"`
	State    string  `json:"state"`
	Type     string  `json:"type"`
	Weight   float32 `json:"weight"` // float32 as stored: JSON writes 0.8, not 0.800000011920929
	Assoc    float32 `json:"assoc"`
	Evidence string  `json:"evidence"`
}

// neighborsText is skill_neighbors' text: name's edges out and in, as listed, of the totals.
func neighborsText(name string, out, in []Edge, outTotal, inTotal int) string {
	var b strings.Builder
	b.WriteString(name + ": " + strconv.Itoa(outTotal) + " published edges out, " + strconv.Itoa(inTotal) + " in.\n")
	for _, part := range []struct {
		title string
		edges []Edge
		total int
	}{
		{"Out (this skill comes first)", out, outTotal},
		{"In (these come first)", in, inTotal},
	} {
		if part.total == 0 {
			continue
		}
		b.WriteString("\n" + part.title + ":\n")
		for _, e := range part.edges {
			b.WriteString("- " + e.Evidence + "\n")
		}
		if n := part.total - len(part.edges); n > 0 {
			b.WriteString("- … " + strconv.Itoa(n) + " more (raise limit)\n")
		}
	}
	return b.String()
}

// recordedText is report_skill_use's answer once a report is kept.
func recordedText(used int, outcome string) string {
	msg := "Recorded: " + strconv.Itoa(used) + " skills used"
	if outcome != "" {
		msg += ", " + outcome
	}
	return msg + ".\n"
}

// oneLine folds white space runs to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
