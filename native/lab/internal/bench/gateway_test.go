package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goBenchOut = `goos: linux
goarch: amd64
pkg: github.com/caskg/caskg/native/internal/gateway
cpu: AMD EPYC
BenchmarkProxiedCall/stdio-2         	    1447	   1744715 ns/op	       294.6 added-p50-us	      1584 added-p99-us	       356.5 direct-p50-us	      6505 direct-p99-us	       651.1 gateway-p50-us	      8089 gateway-p99-us	  562539 B/op	     369 allocs/op
BenchmarkProxiedCall/http-2          	    1066	   1884547 ns/op	      1328.6 added-p50-us	       101.8 added-p99-us	       400.8 direct-p50-us	      8213 direct-p99-us	       729.4 gateway-p50-us	      8315 gateway-p99-us	  642945 B/op	     580 allocs/op
--- BENCH: BenchmarkSearchTools/graph-2
    gateway.go:208: gateway: catalog: 4076 tools from 1 servers
BenchmarkSearchTools/graph-2         	    2142	   1590576 ns/op	      1030 p50-us	     12686 p99-us	  452604 B/op	    1209 allocs/op
BenchmarkSearchTools/lexical
BenchmarkUpdateSwap/learned=0/new=50-2         	       3	 145869806 ns/op
PASS
ok  	github.com/caskg/caskg/native/internal/gateway	14.734s
`

func TestParseGoBench(t *testing.T) {
	got, err := ParseGoBench(strings.NewReader(goBenchOut))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	want := []string{"ProxiedCall/stdio", "ProxiedCall/http", "SearchTools/graph", "UpdateSwap/learned=0/new=50"}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("names (-want +got):\n%s", d)
	}
	if got[2].N != 2142 || got[2].Metrics["p50-us"] != 1030 || got[2].Metrics["allocs/op"] != 1209 {
		t.Errorf("search row: %+v", got[2])
	}
	for _, tc := range []struct{ in, err string }{
		{"BenchmarkX-2 10 5", "line 1: BenchmarkX-2: want value-unit pairs"},
		{"x\nBenchmarkX-2 10", "line 2: BenchmarkX-2: want value-unit pairs"},
		{"BenchmarkX-2 10 fast ns/op", `line 1: BenchmarkX-2: "fast" is not a number`},
	} {
		if _, err := ParseGoBench(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestBenchName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkA-2":                      "A",
		"BenchmarkA/b=1/c=2-16":             "A/b=1/c=2",
		"BenchmarkA/x-y":                    "A/x-y",
		"BenchmarkA":                        "A",
		"BenchmarkUpdateSwap/learned=0-2":   "UpdateSwap/learned=0",
		"BenchmarkUpdateSwap/learned=0/n-1": "UpdateSwap/learned=0/n",
	} {
		if got := benchName(in); got != want {
			t.Errorf("benchName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGatewaySection(t *testing.T) {
	res, err := ParseGoBench(strings.NewReader(goBenchOut))
	if err != nil {
		t.Fatal(err)
	}
	s := GatewaySection(res, "test machine")
	for _, want := range []string{
		"machine: test machine",
		"| stdio | 356 µs | 651 µs | **295 µs** | 6.50 ms | 8.09 ms | 1.58 ms | 1,447 | met (≤ 1.00 ms) |",
		"| http | 401 µs | 729 µs | **1.33 ms** | 8.21 ms | 8.31 ms | 102 µs | 1,066 | **missed** (≤ 1.00 ms) |",
		"| graph | **1.03 ms** | 12.7 ms | 442 KiB | 1,209 | 2,142 | met (≤ 2.00 ms) |",
		"| learned=0/new=50 | 146 ms | 3 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "| lexical") {
		t.Errorf("a row for the unmeasured lexical search:\n%s", s)
	}
	empty := GatewaySection(nil, "m")
	if n := strings.Count(empty, "Not measured"); n != 3 {
		t.Errorf("with no results, %d sections say they were not measured, want 3:\n%s", n, empty)
	}
}

func TestGatewayMarkers(t *testing.T) {
	span := GatewayBegin + "\nG\n" + GatewayEnd
	for _, tc := range []struct{ name, doc, old, want string }{
		{"kept", "# B\n", "# old\n\n" + span + "\n", "# B\n\n" + span + "\n"},
		{"old without a section", "# B\n", "# old\n", "# B\n"},
		{"old with a broken section", "# B\n", GatewayEnd + span, "# B\n"},
		{"doc has its own", "# B\n" + span, "x " + span, "# B\n" + span},
	} {
		if got := KeepGatewaySection(tc.doc, tc.old); got != tc.want {
			t.Errorf("KeepGatewaySection %s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{"", GatewayBegin + "\n" + GatewayEnd + "\n"},
		{"# B\n\n", "# B\n\n" + GatewayBegin + "\n" + GatewayEnd + "\n"},
		{span, span},
		{GatewayEnd, GatewayEnd},
	} {
		if got := WithGatewayMarkers(tc.doc); got != tc.want {
			t.Errorf("WithGatewayMarkers(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

// FuzzParseGoBench: any input parses or fails with an error, and every result has a name, a
// positive count and metrics.
func FuzzParseGoBench(f *testing.F) {
	f.Add(goBenchOut)
	f.Add("BenchmarkX-2 10 5")
	f.Add("BenchmarkX 1 NaN ns/op")
	f.Fuzz(func(t *testing.T, in string) {
		res, err := ParseGoBench(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range res {
			if r.N <= 0 || len(r.Metrics) == 0 {
				t.Errorf("result %+v", r)
			}
		}
		GatewaySection(res, "m")
	})
}
