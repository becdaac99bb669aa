package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/caskg/caskg/native/internal/mcptransport"
)

// scrape GETs /metrics with token ("" for none) and parses the answer with Prometheus's own
// text parser; the status code is returned for a refused scrape.
func scrape(t *testing.T, base, token string) (map[string]*dto.MetricFamily, int) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+mcptransport.MetricsPath, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text exposition format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams, resp.StatusCode
}

// sample is the value of the family's series with the labels (name=value pairs); -1 when absent.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics: GET /metrics needs a client's token when the front has tokens, and its counts
// move with the calls and traces a session makes.
func TestMetrics(t *testing.T) {
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec, Tokens: testTokens(t),
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	front := serveFront(t, g)
	for _, tok := range []string{"", strings.Repeat("z", 40)} {
		if _, code := scrape(t, front.URL, tok); code != http.StatusUnauthorized {
			t.Errorf("scrape with token %q: %d, want 401", tok, code)
		}
	}
	before, code := scrape(t, front.URL, aliceToken)
	if code != http.StatusOK {
		t.Fatalf("scrape with alice's token: %d", code)
	}
	ctx := testContext(t, 20*time.Second)
	cs, err := httpSession(ctx, front.URL, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, p := range []*mcp.CallToolParams{
		{Name: searchTool, Arguments: map[string]any{"query": "read a file"}},
		{Name: callTool, Arguments: map[string]any{"name": "alpha__read_file", "arguments": map[string]any{"path": "a"}}},
		{Name: callTool, Arguments: map[string]any{"name": "alpha__fail"}},
		{Name: searchTool, Arguments: map[string]any{"query": "next"}}, // ends the trace
	} {
		if _, err := cs.CallTool(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := scrape(t, front.URL, aliceToken)
	tests := []struct {
		name          string
		labels        []string
		before, after float64
	}{
		{"caskg_gateway_calls_total", []string{"server", "alpha"}, 0, 2},
		{"caskg_gateway_call_errors_total", []string{"server", "alpha"}, 0, 1},
		{"caskg_gateway_call_duration_seconds", []string{"server", "alpha"}, 0, 2},
		{"caskg_gateway_server_restarts_total", []string{"server", "alpha"}, 0, 0},
		{"caskg_gateway_server_up", []string{"server", "alpha"}, 1, 1},
		{"caskg_gateway_traces_recorded_total", nil, 0, 1},
		{"caskg_gateway_traces_stored", nil, 0, 1},
		{"caskg_gateway_traces_learned", nil, 0, 0},
		{"caskg_gateway_traces_dropped_total", nil, 0, 0},
		{"caskg_gateway_sessions", nil, 0, 1},
		{"caskg_gateway_sessions_started_total", nil, 0, 1},
	}
	for _, tt := range tests {
		if b, a := sample(before, tt.name, tt.labels...), sample(after, tt.name, tt.labels...); b != tt.before || a != tt.after {
			t.Errorf("%s%v: %v then %v, want %v then %v", tt.name, tt.labels, b, a, tt.before, tt.after)
		}
	}
	if sample(after, "process_resident_memory_bytes") <= 0 || sample(after, "go_goroutines") <= 0 {
		t.Errorf("no process or Go runtime metrics")
	}
}
