package api_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// TestSkillSuggestions holds the 404 of GET /v1/skills/{name} to the names mcpcore's lookup
// suggests, the one the hosts pass and the MCP tools use: a swap of two neighbouring letters
// is one edit, so a transposed name finds its skill first.
func TestSkillSuggestions(t *testing.T) {
	closest := func(eng *engine.Engine) func(string) []string { return service.NewNames(eng).Closest }
	tests := []struct {
		name, path string
		closest    bool
		want       string // the whole body
	}{
		{"transposed", "/v1/skills/pick-up-obejct", true,
			`{"error":"api: no skill named \"pick-up-obejct\"; the closest names are: pick-up-object`},
		{"transposed first letters", "/v1/skills/ehat-object-in-microwave", true,
			`{"error":"api: no skill named \"ehat-object-in-microwave\"; the closest names are: heat-object-in-microwave`},
		{"no finder", "/v1/skills/pick-up-obejct", false, `{"error":"api: no skill named \"pick-up-obejct\""}`},
		{"too long to search", "/v1/skills/" + strings.Repeat("x", 513), true,
			`{"error":"api: no skill named \"` + strings.Repeat("x", 513) + `\""}`},
	}
	// The names of the report that asked for it, in a library of office-file skills.
	lib := t.TempDir()
	for _, n := range []string{"xlsx", "pdf", "docx", "pptx"} {
		md := "---\nname: " + n + "\ndescription: Read, edit and create " + n + " files.\n---\nSteps.\n"
		if err := os.MkdirAll(filepath.Join(lib, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lib, n, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	office := testlib.Build(t, lib)
	for _, tt := range []struct{ typed, want string }{{"xlxs", "xlsx"}, {"pfd", "pdf"}, {"dcox", "docx"}} {
		h, err := api.New(office, api.Options{Closest: closest})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/skills/"+tt.typed, nil))
		want := `{"error":"api: no skill named \"` + tt.typed + `\"; the closest names are: ` + tt.want
		if body := w.Body.String(); w.Code != 404 || !strings.HasPrefix(body, want) {
			t.Errorf("GET /v1/skills/%s: %d %s, want 404 starting %s", tt.typed, w.Code, body, want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := api.Options{Version: "test"}
			if tt.closest {
				opt.Closest = closest
			}
			h, err := api.New(testlib.Sample(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", tt.path, nil))
			if body := w.Body.String(); w.Code != 404 || !strings.HasPrefix(body, tt.want) {
				t.Errorf("answer %d %s, want 404 starting %s", w.Code, body, tt.want)
			}
		})
	}
}
