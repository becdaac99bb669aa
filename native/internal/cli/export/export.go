// Package export writes a decoded skill graph as JSON, Graphviz DOT or GraphML, with every
// skill and every published edge's state, weight, association and relation type.
package export

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs"
)

// Formats lists the supported output formats.
var Formats = []string{"json", "dot", "graphml"}

// Write writes g to w in format.
func Write(w io.Writer, g *graphs.Graph, format string) error {
	switch format {
	case "json":
		return writeJSON(w, g)
	case "dot":
		return writeDOT(w, g)
	case "graphml":
		return writeGraphML(w, g)
	}
	return fmt.Errorf("export: unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// Node is a skill in the JSON export.
type Node struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source,omitempty"`
}

// Edge is a published edge in the JSON export.
type Edge struct {
	Source string  `json:"source"`
	Target string  `json:"target"`
	Weight float64 `json:"weight"`
	Assoc  float64 `json:"assoc"`
	State  string  `json:"state"`
	Type   string  `json:"type"`
}

// Document is the JSON export.
type Document struct {
	Version string          `json:"version"`
	Params  json.RawMessage `json:"params"`
	Nodes   []Node          `json:"nodes"`
	Edges   []Edge          `json:"edges"`
}

// edges lists g's published edges in CSR order.
func edges(g *graphs.Graph) []Edge {
	out := make([]Edge, 0, g.NumEdges())
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			out = append(out, Edge{
				Source: g.Name(u), Target: g.Name(g.Target(e)),
				Weight: round(g.Weight(e)), Assoc: round(g.Assoc(e)),
				State: g.State(e).String(), Type: g.Type(e).String(),
			})
		}
	}
	return out
}

// round keeps float32 values short in text output: 0.3 rather than 0.30000001192092896.
func round(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

func writeJSON(w io.Writer, g *graphs.Graph) error {
	maj, min := g.Version()
	doc := Document{Version: fmt.Sprintf("%d.%d", maj, min), Params: g.Params(), Edges: edges(g)}
	for i := range g.NumSkills() {
		doc.Nodes = append(doc.Nodes, Node{ID: i, Name: g.Name(i), Description: g.Description(i), Source: g.Source(i)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

var dotStyle = map[string]string{
	"confirmed": "solid", "uncertain": "dashed", "scaffold": "dotted", "unvalidated": "solid", "rejected": "invis",
}

// writeDOT writes the graph for drawing: the skills with a published edge and the edges. A
// skill with none is left out (a comment counts them): on a library of text alone most skills
// are, and a drawing of hundreds of unlinked boxes hides the graph. JSON and GraphML list every
// skill.
func writeDOT(w io.Writer, g *graphs.Graph) error {
	linked := make([]bool, g.NumSkills())
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			linked[u], linked[g.Target(e)] = true, true
		}
	}
	n := 0
	for _, l := range linked {
		if !l {
			n++
		}
	}
	var b strings.Builder
	b.WriteString("digraph caskg {\n")
	if n > 0 {
		fmt.Fprintf(&b, "  // %d of %d skills have no published edge and are left out; the JSON and GraphML exports list every skill.\n", n, len(linked))
	}
	b.WriteString("  rankdir=LR;\n  node [shape=box, fontsize=10];\n")
	for i := range g.NumSkills() {
		if linked[i] {
			fmt.Fprintf(&b, "  n%d [label=%s, tooltip=%s];\n", i, dotQuote(g.Name(i)), dotQuote(g.Description(i)))
		}
	}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			fmt.Fprintf(&b, "  n%d -> n%d [weight=%s, penwidth=%.2f, style=%s, label=%s];\n",
				u, g.Target(e), strconv.FormatFloat(round(g.Weight(e)), 'g', -1, 64),
				0.5+2.5*float64(g.Weight(e)), dotStyle[g.State(e).String()],
				dotQuote(g.Type(e).String()+" "+g.State(e).String()))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeGraphML(w io.Writer, g *graphs.Graph) error {
	type data struct {
		Key   string `xml:"key,attr"`
		Value string `xml:",chardata"`
	}
	type node struct {
		ID   string `xml:"id,attr"`
		Data []data `xml:"data"`
	}
	type edge struct {
		Source string `xml:"source,attr"`
		Target string `xml:"target,attr"`
		Data   []data `xml:"data"`
	}
	type key struct {
		ID   string `xml:"id,attr"`
		For  string `xml:"for,attr"`
		Name string `xml:"attr.name,attr"`
		Type string `xml:"attr.type,attr"`
	}
	type graph struct {
		EdgeDefault string `xml:"edgedefault,attr"`
		Nodes       []node `xml:"node"`
		Edges       []edge `xml:"edge"`
	}
	type graphml struct {
		XMLName xml.Name `xml:"graphml"`
		NS      string   `xml:"xmlns,attr"`
		Keys    []key    `xml:"key"`
		Graph   graph    `xml:"graph"`
	}
	doc := graphml{NS: "http://graphml.graphdrawing.org/xmlns", Keys: []key{
		{"name", "node", "name", "string"}, {"description", "node", "description", "string"},
		{"source", "node", "source", "string"},
		{"weight", "edge", "weight", "double"}, {"assoc", "edge", "assoc", "double"},
		{"state", "edge", "state", "string"}, {"type", "edge", "type", "string"},
	}, Graph: graph{EdgeDefault: "directed"}}
	for i := range g.NumSkills() {
		doc.Graph.Nodes = append(doc.Graph.Nodes, node{ID: fmt.Sprintf("n%d", i), Data: []data{
			{"name", g.Name(i)}, {"description", g.Description(i)}, {"source", g.Source(i)}}})
	}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			doc.Graph.Edges = append(doc.Graph.Edges, edge{
				Source: fmt.Sprintf("n%d", u), Target: fmt.Sprintf("n%d", g.Target(e)), Data: []data{
					{"weight", strconv.FormatFloat(round(g.Weight(e)), 'g', -1, 64)},
					{"assoc", strconv.FormatFloat(round(g.Assoc(e)), 'g', -1, 64)},
					{"state", g.State(e).String()}, {"type", g.Type(e).String()},
				}})
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
