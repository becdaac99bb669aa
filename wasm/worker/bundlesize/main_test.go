package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

func sizes(gzip int64) Sizes {
	return Sizes{
		Modules: []Module{{"entry.mjs", 3000, 1200}, {"wasm_exec.js", 17000, 4600}, {"app.wasm", 5796536, 1630117}, {"caskg.skg", 4303288, gzip - 1635917}},
		Raw:     10119824,
		Gzip:    gzip,
	}
}

func TestCheck(t *testing.T) {
	advice := []string{"The artifact (caskg.skg)", "--embedder none", "--body-head 600", "--body-head 0", "WORKER_ARTIFACT="}
	tests := []struct {
		name    string
		gzip    int64
		want    []string // in the report
		notWant []string
		err     string // "" for no error
	}{
		{"sample", 1749051, []string{"upload bundle", "1749051 gzip", "1.67 MiB"}, append(advice, "warning"), ""},
		{"at the free limit", FreeLimit, []string{"3.00 MiB"}, append(advice, "warning"), ""},
		{"over the free limit", FreeLimit + 1, append(advice, "warning: the worker bundle is 3.00 MiB gzip, over the Workers Free plan's limit of 3.00 MiB: only the Paid plan (10.00 MiB) accepts it"), nil, ""},
		{"859 skills", 3869000, append(advice, "warning", "3.69 MiB", "The artifact (caskg.skg) is 2.13 MiB gzip"), nil, ""},
		{"at the paid limit", PaidLimit, append(advice, "warning", "Paid plan"), []string{"refuses"}, ""},
		{"over the paid limit", PaidLimit + 1, advice, []string{"warning"}, "bundlesize: the worker bundle is 10.00 MiB gzip, over the Workers Paid plan's limit of 10.00 MiB: Cloudflare refuses the upload on every plan."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, err := Check(sizes(tt.gzip))
			if got := errText(err); got != tt.err {
				t.Errorf("error %q, want %q", got, tt.err)
			}
			if tt.err != "" && !strings.Contains(report, tt.err) {
				t.Errorf("the report does not carry the error:\n%s", report)
			}
			fixture.Contains(t, "the report", report, tt.want, tt.notWant)
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The limits are Cloudflare's, in MiB as wrangler names them.
func TestLimits(t *testing.T) {
	if FreeLimit != 3*1024*1024 || PaidLimit != 10*1024*1024 {
		t.Errorf("limits %d, %d: want 3 MiB and 10 MiB", FreeLimit, PaidLimit)
	}
}

func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	for _, name := range Modules {
		data := []byte(strings.Repeat(name+" ", 1000))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Measure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Modules) != len(Modules) {
		t.Fatalf("%d modules, want %d", len(s.Modules), len(Modules))
	}
	var raw, sum int64
	for i, m := range s.Modules {
		if m.Name != Modules[i] || m.Raw != int64(len(m.Name)+1)*1000 || m.Gzip <= 0 || m.Gzip >= m.Raw {
			t.Errorf("module %d: %+v", i, m)
		}
		raw += m.Raw
		sum += m.Gzip
	}
	if s.Raw != raw || s.Gzip <= 0 || s.Gzip >= raw {
		t.Errorf("total %+v; raw sum %d", s, raw)
	}

	if err := os.Remove(filepath.Join(dir, "caskg.skg")); err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(dir); err == nil || !strings.Contains(err.Error(), "caskg.skg") || !strings.Contains(err.Error(), "make worker") {
		t.Errorf("missing module: error %v", err)
	}
}
