package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
)

// TestRetrieveCJK holds /v1/retrieve to what a client in another script sees: a Chinese task
// finds the Chinese skill of the multilingual library, and a Korean task on the English sample
// is answered with a note, GET and POST alike, not an empty list without a word.
func TestRetrieveCJK(t *testing.T) {
	english := sampleHandler(t)
	multi, err := New(testlib.Multilingual(t), Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const note = `"note":"no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"`
	tests := []struct {
		name      string
		h         *Handler
		query     string
		want, not []string
	}{
		{"Chinese finds Chinese", multi, "帮我查询北京的天气", []string{`{"results":[{"name":"weather-forecast-zh"`}, []string{`"note"`}},
		{"Korean on English", english, "서울 날씨 알려줘", []string{`{"results":[],"match":0,` + note}, nil},
		{"Korean on English, rendered", english, "서울 날씨 알려줘&render=true", []string{note, `\nNote: no term of the query`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, extra, _ := strings.Cut(tt.query, "&")
			reqs := []*http.Request{httptest.NewRequest("GET", "/v1/retrieve?q="+url.QueryEscape(q)+"&"+extra, nil)}
			if extra == "" {
				reqs = append(reqs, httptest.NewRequest("POST", "/v1/retrieve", strings.NewReader(`{"query":"`+q+`"}`)))
			}
			for _, r := range reqs {
				w := httptest.NewRecorder()
				tt.h.ServeHTTP(w, r)
				body := w.Body.String()
				if w.Code != 200 {
					t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, body)
				}
				for _, s := range tt.want {
					if !strings.Contains(body, s) {
						t.Errorf("%s %s: body lacks %s:\n%s", r.Method, r.URL, s, body)
					}
				}
				for _, s := range tt.not {
					if strings.Contains(body, s) {
						t.Errorf("%s %s: body has %s:\n%s", r.Method, r.URL, s, body)
					}
				}
			}
		})
	}
}
