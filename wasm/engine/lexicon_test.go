package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

func TestBuildLexicon(t *testing.T) {
	docs := []Doc{
		{
			Name: "heat-water", Description: "Heat water on a stove.", Tags: []string{"kitchen"},
			Schema: "temperature", Body: "Watch the pot.",
		},
		{Name: "pick-up-object", Description: "Pick up an object.", Body: "Water the plants."},
	}
	// doc 0: heat 4+2, water 4+2, stov 2, kitchen 2, temperatur .5, watch .5, pot .5 = 17.5
	// doc 1: pick 4+2, object 4+2, water .5, plant .5 = 13
	want := graphs.Lexicon{
		K1: DefaultK1, B: DefaultB, AvgDL: (17.5 + 13) / 2,
		Terms: []string{"heat", "kitchen", "object", "pick", "plant", "pot", "stov", "temperatur", "watch", "water"},
		Postings: [][]graphs.Posting{
			{{Doc: 0, TF: 6}},
			{{Doc: 0, TF: 2}},
			{{Doc: 1, TF: 6}},
			{{Doc: 1, TF: 6}},
			{{Doc: 1, TF: 0.5}},
			{{Doc: 0, TF: 0.5}},
			{{Doc: 0, TF: 2}},
			{{Doc: 0, TF: 0.5}},
			{{Doc: 0, TF: 0.5}},
			// A name-and-description match weighs twelve times a body mention.
			{{Doc: 0, TF: 6}, {Doc: 1, TF: 0.5}},
		},
		DocLen: []float32{17.5, 13},
	}
	got := BuildLexicon(docs)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildLexicon (-want +got):\n%s", diff)
	}
	// The lexicon must be one the artifact format accepts.
	if _, err := graphs.Encode(&graphs.Artifact{
		Skills:  []graphs.Skill{{Name: docs[0].Name}, {Name: docs[1].Name}},
		Lexicon: got,
	}); err != nil {
		t.Errorf("Encode rejects the lexicon: %v", err)
	}
}

func TestBuildLexiconPostingsAscending(t *testing.T) {
	// Many documents share terms, so map order inside BuildLexicon would show if unsorted.
	var docs []Doc
	for i := range 50 {
		docs = append(docs, Doc{Name: "skill" + strings.Repeat("x", i), Description: "shared words here", Body: "common body"})
	}
	lx := BuildLexicon(docs)
	for i := 1; i < len(lx.Terms); i++ {
		if lx.Terms[i-1] >= lx.Terms[i] {
			t.Errorf("terms not strictly ascending: %q then %q", lx.Terms[i-1], lx.Terms[i])
		}
	}
	for ti, ps := range lx.Postings {
		for i := 1; i < len(ps); i++ {
			if ps[i-1].Doc >= ps[i].Doc {
				t.Errorf("postings of %q not ascending: %v", lx.Terms[ti], ps)
				break
			}
		}
	}
	if i, ok := findTerm(lx, Stem("shared")); !ok || len(lx.Postings[i]) != len(docs) {
		t.Errorf("term %q should be in all %d documents", Stem("shared"), len(docs))
	}
}

func TestBuildLexiconBodyHead(t *testing.T) {
	// é is two bytes: counting bytes instead of runes would cut before the last word.
	tests := []struct {
		name string
		body string
		want bool // is "zebra" indexed
	}{
		{"last word within head", strings.Repeat("é", BodyHeadRunes-len(" zebra")) + " zebra", true},
		{"word after head", strings.Repeat("é", BodyHeadRunes) + " zebra", false},
		{"word after a long ASCII head", strings.Repeat("lorem ", BodyHeadRunes/6+1) + "zebra", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lx := BuildLexicon([]Doc{{Name: "animal-facts", Body: tt.body}})
			_, got := findTerm(lx, "zebra")
			if got != tt.want {
				t.Errorf("zebra indexed = %v, want %v (terms %.80q)", got, tt.want, lx.Terms)
			}
		})
	}
}

func TestBuildLexiconEmpty(t *testing.T) {
	lx := BuildLexicon(nil)
	if len(lx.Terms) != 0 || len(lx.DocLen) != 0 || lx.AvgDL != 0 {
		t.Errorf("BuildLexicon(nil) = %+v, want an empty lexicon", lx)
	}
}

func findTerm(lx graphs.Lexicon, term string) (int, bool) {
	for i, t := range lx.Terms {
		if t == term {
			return i, true
		}
	}
	return 0, false
}

func TestAPINameEnd(t *testing.T) {
	for _, c := range []struct {
		name string
		want string // the API part
	}{
		{"film_api_get_film_info", "film_api_"},
		{"academic-publishing-api-get-journal", "academic-publishing-api-"},
		{"Weather.API.forecast", "Weather.API."},
		{"rapid_api_api_list", "rapid_api_"},
		{"api_get_status", ""},                              // no word before "api"
		{"film_api", ""},                                    // no word after it
		{"film_api_", ""},                                   // a separator is not a word
		{"film__api_get", ""},                               // an empty word before it
		{"film_apis_list", ""},                              // "apis" is another word
		{"film_rapi_list", ""},                              // so is "rapi"
		{"capital_api", ""},                                 // "api" at the end
		{"getFilmApiInfo", ""},                              // camelCase is not a separator
		{"pdf-extract", ""},                                 // no "api" at all
		{"generate_secure_api_key", "generate_secure_api_"}, // the shape, whatever the words mean
	} {
		if got := c.name[:apiNameEnd(c.name)]; got != c.want {
			t.Errorf("apiNameEnd(%q): API part %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBuildLexiconAPIName(t *testing.T) {
	lx := BuildLexicon([]Doc{{Name: "film_api_get_film_info"}, {Name: "get-film"}})
	tf := map[string]map[uint32]float32{}
	for i, term := range lx.Terms {
		tf[term] = map[uint32]float32{}
		for _, p := range lx.Postings[i] {
			tf[term][p.Doc] = p.TF
		}
	}
	want := map[string]map[uint32]float32{
		// The API part counts weightAPIName, the endpoint the full name weight.
		"film": {0: weightAPIName + WeightName, 1: WeightName},
		"api":  {0: weightAPIName},
		"get":  {0: WeightName, 1: WeightName},
		"info": {0: WeightName},
	}
	if diff := cmp.Diff(want, tf); diff != "" {
		t.Errorf("term frequencies (-want +got):\n%s", diff)
	}
	if want := []float32{weightAPIName*2 + WeightName*3, WeightName * 2}; !slices.Equal(lx.DocLen, want) {
		t.Errorf("DocLen %v, want %v", lx.DocLen, want)
	}
}

// A multi-need task against endpoints named API_api_ENDPOINT: the need written in many words
// names the copy-editing API, whose every endpoint repeats "copy editing" in its name, and the
// need written in few words is the film's, whose word is in its tool's endpoint. With the API's
// words at the name's full weight three copy-editing siblings filled the first three.
func TestQueryAPINameSiblings(t *testing.T) {
	skills := []testSkill{
		{"copy_editing_api_get_copy_edits", "Get the copy edits proposed for one sentence of a document.", ""},
		{"copy_editing_api_perform_copy_editing", "Copy edit a whole document and return the edited text.", ""},
		{"copy_editing_api_check_style", "Check a text against a style guide.", ""},
		{"copy_editing_api_count_words", "Count the words of a text.", ""},
		{"copy_editing_api_list_editors", "List the available editors.", ""},
		{"cinema_api_get_film_info", "Details of a movie: its year, cast and director.", ""},
		{"music_api_get_album", "Get the tracks of a music album.", ""},
		{"weather_api_get_forecast", "Get the weather forecast of a city.", ""},
		{"kinship_api_get_relations", "Get the kinship relations of a person.", ""},
		{"payments_api_refund_order", "Refund a paid order.", ""},
	}
	for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa") {
		skills = append(skills, testSkill{w + "_api_get_" + w, "Get the " + w + " record.", ""})
	}
	e := newTestEngine(t, skills, nil)
	got := names(query(t, e, Request{
		Query: "Please retrieve the copy edits for the second sentence of my document and " +
			"copy edit the rest of the document. Also, tell me about the film Titanic.",
		K: 3, NoGraph: true,
	}))
	if !slices.Contains(got, "cinema_api_get_film_info") || !slices.Contains(got, "copy_editing_api_get_copy_edits") {
		t.Errorf("first three %v: want the film tool and the copy-edits tool among them", got)
	}
}
