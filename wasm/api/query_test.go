package api

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// queryCases are query strings and path segments for parseQuery and unescape, each held to
// net/url.
var queryCases = []string{
	"", "q=heat+an+egg&k=3", "q=a%20b&allow=x*,y*&allow=z", "q", "=v", "&&q=1&", "q=%zz", "q=%4", "q=%",
	"a=1;b=2", "q=%zz&a;b", "a;b&q=%zz", "q=%e2%80%a6", "q=%E2%80%A6", "k=1=2", "a+b=c+d", "q=%2B",
	"name%2Fwith%2Fslashes", "heat-object", "x%", "%41%42",
}

func TestParseQuery(t *testing.T) {
	for _, raw := range queryCases {
		checkQuery(t, raw)
	}
	checkQuery(t, strings.Repeat("a=1&", 9999)+"a=1")
	checkQuery(t, strings.Repeat("a=1&", 10000)+"a=1")
}

func FuzzParseQuery(f *testing.F) {
	for _, raw := range queryCases {
		f.Add(raw)
	}
	f.Fuzz(checkQuery)
}

func checkQuery(t *testing.T, raw string) {
	got, err := parseQuery(raw)
	want, wantErr := url.ParseQuery(raw)
	if errText(err) != errText(wantErr) || len(want) > 0 && !reflect.DeepEqual(got, map[string][]string(want)) {
		t.Fatalf("parseQuery(%.80q) = %v, %v; net/url %v, %v", raw, got, err, want, wantErr)
	}
	seg, err := unescape(raw, false)
	wantSeg, wantErr := url.PathUnescape(raw)
	if seg != wantSeg || errText(err) != errText(wantErr) {
		t.Fatalf("unescape(%.80q) = %q, %v; url.PathUnescape %q, %v", raw, seg, err, wantSeg, wantErr)
	}
}
