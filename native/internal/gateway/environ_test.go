package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/google/go-cmp/cmp"
)

func TestServerEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/me", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=k", "LANG=C.UTF-8",
		"TERM=() { evil; }", "A=gateway", "broken"}
	for _, tt := range []struct {
		name string
		s    ServerConfig
		want []string
	}{
		{"safe list only", ServerConfig{}, []string{"PATH=/bin", "HOME=/home/me", "LANG=C.UTF-8"}},
		{"entry's own over the gateway's", ServerConfig{Env: map[string]string{"A": "entry", "PATH": "/opt/bin", "GITHUB_TOKEN": "scoped"}},
			[]string{"HOME=/home/me", "LANG=C.UTF-8", "A=entry", "GITHUB_TOKEN=scoped", "PATH=/opt/bin"}},
		{"inheritEnv", ServerConfig{InheritEnv: true, Env: map[string]string{"A": "entry"}},
			[]string{"PATH=/bin", "HOME=/home/me", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=k", "LANG=C.UTF-8", "TERM=() { evil; }", "A=entry"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, serverEnv(&tt.s, environ)); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
		})
	}
}

// A secret in the gateway's environment does not reach a stdio server unless its entry asks
// for everything.
func TestStdioServerEnvironment(t *testing.T) {
	t.Setenv("CASKG_TEST_SECRET", "hunter2")
	for _, inherit := range []bool{false, true} {
		s := stdioServer(t, "child", "env")
		s.InheritEnv = inherit
		s.Env["NAMED"] = "by-entry"
		g := startGateway(t, &Config{Servers: []ServerConfig{s}}, Options{})
		fc := connect(t, g)
		res := fc.callTool(t, "child__environ", nil)
		if res.IsError {
			t.Fatalf("inheritEnv %v: %q", inherit, testlib.ToolText(res))
		}
		env := strings.Split(testlib.ToolText(res), "\n")
		has := func(kv string) bool {
			for _, e := range env {
				if e == kv {
					return true
				}
			}
			return false
		}
		if got := has("CASKG_TEST_SECRET=hunter2"); got != inherit {
			t.Errorf("inheritEnv %v: the secret reached the server: %v", inherit, got)
		}
		if !has("NAMED=by-entry") || !has("GATEWAY_TEST_SERVER=env") {
			t.Errorf("inheritEnv %v: the entry's variables are missing: %q", inherit, env)
		}
		if p := "PATH=" + os.Getenv("PATH"); !has(p) {
			t.Errorf("inheritEnv %v: no %s", inherit, p)
		}
	}
}
