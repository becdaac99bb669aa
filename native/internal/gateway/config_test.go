package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     *Config // nil: an error is wanted
		err      string
		warn     []string
	}{
		{name: "stdio and http", in: `{"mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}, "cwd": "/", "deny": ["write_*"], "timeout": "30s"},
  "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}
}, "deny": ["web__admin*"]}`,
			want: &Config{Deny: []string{"web__admin*"}, Servers: []ServerConfig{
				{Name: "fs", Command: "npx", Args: []string{"-y", "server-fs", "/tmp"}, Env: map[string]string{"A": "1"}, Cwd: "/", Deny: []string{"write_*"}, Timeout: 30 * time.Second},
				{Name: "web", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: defaultTimeout},
			}}},
		{name: "other clients' fields warn", in: `{"mcpServers": {"a": {"command": "x", "autoApprove": ["t"], "disabled": false}}, "globalShortcut": ""}`,
			want: &Config{Servers: []ServerConfig{{Name: "a", Command: "x", Timeout: defaultTimeout}}},
			warn: []string{"gateway: s.json:1:54: mcpServers.a.autoApprove: a field of Cline, ignored", "gateway: s.json:1:100: globalShortcut: a field of Claude Desktop, ignored"}},
		{name: "allowed", in: `{"mcpServers": {"fs": {"command": "x", "allowed": ["read*"]}}}`,
			err: `gateway: s.json:1:51: mcpServers.fs.allowed: unknown field; did you mean "allow"?`},
		{name: "denied", in: `{"mcpServers": {"fs": {"command": "x", "denied": ["*"]}}}`,
			err: `gateway: s.json:1:50: mcpServers.fs.denied: unknown field; did you mean "deny"?`},
		{name: "denyList", in: `{"mcpServers": {"fs": {"command": "x", "denyList": ["*"]}}}`,
			err: `gateway: s.json:1:52: mcpServers.fs.denyList: unknown field; did you mean "deny"?`},
		{name: "deny_list", in: `{"mcpServers": {"fs": {"command": "x", "deny_list": ["*"]}}}`,
			err: `gateway: s.json:1:53: mcpServers.fs.deny_list: unknown field; did you mean "deny"?`},
		{name: "denied at top", in: `{"mcpServers": {"fs": {"command": "x"}}, "denied": ["*"]}`,
			err: `gateway: s.json:1:52: denied: unknown field; did you mean "deny"?`},
		{name: "cmd", in: `{"mcpServers": {"fs": {"cmd": "x"}}}`,
			err: `gateway: s.json:1:31: mcpServers.fs.cmd: unknown field; did you mean "command"?`},
		{name: "unrelated field", in: `{"mcpServers": {"fs": {"command": "x", "colour": "red"}}}`,
			err: `gateway: s.json:1:50: mcpServers.fs.colour: unknown field; the known fields are command, args, env, envFile, inheritEnv, cwd, url, headers, type, allow, deny, timeout, disabled`},
		{name: "another client's filter", in: `{"mcpServers": {"fs": {"command": "x", "excludeTools": ["rm"]}}}`,
			err: `gateway: s.json:1:56: mcpServers.fs.excludeTools: "excludeTools" is another client's tool filter, which the gateway does not read; use "deny"`},
		{name: "variables", in: `{"mcpServers": {"fs": {"command": "${HOME}/bin/x", "args": ["--token=${TOKEN}", "${MISSING:-fallback}", "$HOME", "${env:TOKEN}"],
  "env": {"T": "${TOKEN}", "E": "${EMPTY:-dflt}"}, "cwd": "${HOME}"},
  "web": {"url": "${MCP_URL}", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`,
			want: &Config{Servers: []ServerConfig{
				{Name: "fs", Command: "/home/me/bin/x", Args: []string{"--token=s3cret", "fallback", "$HOME", "s3cret"},
					Env: map[string]string{"T": "s3cret", "E": "dflt"}, Cwd: "/home/me", Timeout: defaultTimeout},
				{Name: "web", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: defaultTimeout},
			}}},
		{name: "unset variable", in: `{"mcpServers": {"web": {"url": "https://h/", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}`,
			err: `gateway: s.json:1:75: mcpServers.web.headers.Authorization: ${API_TOKEN} is not set (give a default with ${API_TOKEN:-value})`},
		{name: "unset variable in url", in: `{"mcpServers": {"web": {"url": "${NO_URL}"}}}`,
			err: `gateway: s.json:1:32: mcpServers.web.url: ${NO_URL} is not set (give a default with ${NO_URL:-value})`},
		{name: "unclosed variable", in: `{"mcpServers": {"a": {"command": "x", "args": ["${HOME"]}}}`,
			err: `gateway: s.json:1:48: mcpServers.a.args[0]: "${HOME" has "${" without a closing "}"`},
		{name: "bad variable name", in: `{"mcpServers": {"a": {"command": "x", "env": {"A": "${1X}"}}}}`,
			err: `gateway: s.json:1:52: mcpServers.a.env.A: ${1X}: "1X" is not a variable name (letters, digits and '_', not starting with a digit)`},
		{name: "inheritEnv", in: `{"mcpServers": {"a": {"command": "x", "inheritEnv": true}}}`,
			want: &Config{Servers: []ServerConfig{{Name: "a", Command: "x", InheritEnv: true, Timeout: defaultTimeout}}}},
		{name: "inheritEnv on http", in: `{"mcpServers": {"a": {"url": "http://h/", "inheritEnv": true}}}`,
			err: `gateway: s.json:1:22: mcpServers.a: "args", "env", "envFile", "inheritEnv" and "cwd" are for stdio servers, and this one has a "url"`},
		{name: "disabled server dropped", in: `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "disabled": true}}}`,
			want: &Config{Servers: []ServerConfig{{Name: "a", Command: "x", Timeout: defaultTimeout}}}},
		{name: "arg not a string", in: "{\"mcpServers\": {\"fs\": {\"command\": \"x\",\n \"args\": [\"a\", \"b\", 3]}}}",
			err: "gateway: s.json:2:21: mcpServers.fs.args[2]: want a string, got a number"},
		{name: "typo of deny", in: `{"mcpServers": {"fs": {"command": "x", "deyn": ["a"]}}}`,
			err: `gateway: s.json:1:48: mcpServers.fs.deyn: unknown field; did you mean "deny"?`},
		{name: "typo at top", in: `{"mcpServers": {"fs": {"command": "x"}}, "alow": []}`,
			err: `gateway: s.json:1:50: alow: unknown field; did you mean "allow"?`},
		{name: "name with __", in: `{"mcpServers": {"a__b": {"command": "x"}}}`,
			err: `gateway: s.json:1:25: mcpServers.a__b: a server name must not contain "__" (it separates server and tool in SERVER__TOOL)`},
		{name: "empty name", in: `{"mcpServers": {"": {"command": "x"}}}`,
			err: `gateway: s.json:1:21: mcpServers.: a server name must not be empty`},
		{name: "name charset", in: `{"mcpServers": {"a b": {"command": "x"}}}`,
			err: `gateway: s.json:1:24: mcpServers.a b: a server name may hold only letters, digits, '_' and '-', not ' '`},
		{name: "trailing underscore", in: `{"mcpServers": {"fs_": {"command": "x"}}}`,
			err: `gateway: s.json:1:24: mcpServers.fs_: a server name must not start or end with "_"`},
		{name: "both command and url", in: `{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`,
			err: `gateway: s.json:1:22: mcpServers.a: has both "command" and "url"; a server is one or the other`},
		{name: "neither", in: `{"mcpServers": {"a": {}}}`,
			err: `gateway: s.json:1:22: mcpServers.a: needs "command" (a stdio server) or "url" (a streamable-HTTP server)`},
		{name: "sse", in: `{"mcpServers": {"a": {"type": "sse", "url": "http://h/"}}}`,
			err: `gateway: s.json:1:31: mcpServers.a.type: "sse" servers are not supported; the gateway speaks stdio and streamable HTTP`},
		{name: "bad timeout", in: `{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`,
			err: `gateway: s.json:1:50: mcpServers.a.timeout: "soon" is not a duration in (0, 1h0m0s], such as "30s"`},
		{name: "bad glob", in: `{"mcpServers": {"a": {"command": "x", "allow": ["[a"]}}}`,
			err: `gateway: s.json:1:49: mcpServers.a.allow[0]: "[a" is not a glob: '[', ']' and '\' are reserved; a pattern has '*' (any run of characters) and '?' (one character)`},
		{name: "bad url", in: `{"mcpServers": {"a": {"url": "ftp://h"}}}`,
			err: `gateway: s.json:1:30: mcpServers.a.url: "ftp://h" is not an http:// or https:// URL`},
		{name: "duplicate server", in: `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
			err: `gateway: s.json:1:40: mcpServers.a: key given twice`},
		{name: "no servers", in: `{"mcpServers": {}}`, err: `gateway: s.json:1:1: mcpServers: no servers (all absent or disabled)`},
		{name: "no mcpServers", in: `{}`, err: `gateway: s.json:1:1: no "mcpServers" object`},
		{name: "not an object", in: `[1]`, err: `gateway: s.json:1:1: want a JSON object with "mcpServers", got an array`},
		{name: "broken JSON", in: `{"mcpServers": {"a": {"command": "x"`, err: `gateway: s.json:1:37: mcpServers.a: want ',' or '}', got the end of the input`},
		{name: "trailing data", in: `{"mcpServers": {"a": {"command": "x"}}} x`, err: `gateway: s.json:1:41: data after the JSON value`},
		{name: "env not strings", in: `{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}`,
			err: `gateway: s.json:1:52: mcpServers.a.env.K: want a string, got a number`},
		{name: "clients", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"ci-bot": {"allow": ["a__read*"]}, "intern": {"deny": ["*delete*"]}}}`,
			want: &Config{Servers: []ServerConfig{{Name: "a", Command: "x", Timeout: defaultTimeout}},
				Clients: map[string]ClientConfig{"ci-bot": {Allow: []string{"a__read*"}}, "intern": {Deny: []string{"*delete*"}}}}},
		{name: "client's denied", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"intern": {"denied": ["*"]}}}`,
			err: `gateway: s.json:1:74: clients.intern.denied: unknown field; did you mean "deny"?`},
		{name: "client's autoApprove", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"intern": {"autoApprove": []}}}`,
			err: `gateway: s.json:1:79: clients.intern.autoApprove: unknown field; the known fields are allow, deny`},
		{name: "client name", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"a b": {}}}`,
			err: `gateway: s.json:1:60: clients.a b: a client name may hold only letters, digits, '_', '-' and '.', not ' '`},
		{name: "client not an object", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"bob": ["*"]}}`,
			err: `gateway: s.json:1:60: clients.bob: want an object with "allow" or "deny", got an array`},
		{name: "client twice", in: `{"mcpServers": {"a": {"command": "x"}}, "clients": {"bob": {}, "bob": {}}}`,
			err: `gateway: s.json:1:64: clients.bob: key given twice`},
		{name: "headers on stdio", in: `{"mcpServers": {"a": {"command": "x", "headers": {"K": "v"}}}}`,
			err: `gateway: s.json:1:22: mcpServers.a: "headers" are for HTTP servers, and this one has a "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warn, err := ParseConfig("s.json", []byte(tt.in), ConfigOptions{LookupEnv: testEnv})
			if tt.want == nil {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error\n got %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.warn, warn); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
		})
	}
}

// testEnv is the environment the configuration tests expand variables from.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{"HOME": "/home/me", "TOKEN": "s3cret", "MCP_URL": "https://mcp.example.com/mcp", "EMPTY": ""}[name]
	return v, ok
}

// --lenient turns an unknown field into a warning; fields of other clients warn either way.
func TestParseConfigLenient(t *testing.T) {
	in := `{"mcpServers": {"fs": {"command": "x", "denied": ["*"], "autoApprove": []}}, "colour": 1}`
	if _, _, err := ParseConfig("s.json", []byte(in), ConfigOptions{}); err == nil {
		t.Fatal("strict: no error")
	}
	cfg, warn, err := ParseConfig("s.json", []byte(in), ConfigOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`gateway: s.json:1:50: mcpServers.fs.denied: unknown field; did you mean "deny"? (--lenient: ignored)`,
		`gateway: s.json:1:72: mcpServers.fs.autoApprove: a field of Cline, ignored`,
		`gateway: s.json:1:88: colour: unknown field; the known fields are mcpServers, allow, deny, clients (--lenient: ignored)`,
	}
	if d := cmp.Diff(want, warn); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Deny != nil {
		t.Errorf("config: %+v", cfg.Servers)
	}
}

// envFile's variables come under env's, from a file beside the servers file.
func TestEnvFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".env"), []byte("# comment\nexport A=from-file\nB=\"quoted value\"\n\nC=c\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.env"), []byte("A=1\nnot a line\n"), 0o644)
	p := filepath.Join(dir, "servers.json")
	os.WriteFile(p, []byte(`{"mcpServers": {"a": {"command": "x", "envFile": ".env", "env": {"C": "from-env"}}}}`), 0o644)
	cfg, _, err := LoadConfig(p, ConfigOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{"A": "from-file", "B": "quoted value", "C": "from-env"}, cfg.Servers[0].Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	os.WriteFile(p, []byte(`{"mcpServers": {"a": {"command": "x", "envFile": "bad.env"}}}`), 0o644)
	if _, _, err := LoadConfig(p, ConfigOptions{}); err == nil || !strings.Contains(err.Error(), `servers.json:1:50: mcpServers.a.envFile: `) ||
		!strings.Contains(err.Error(), `bad.env:2: want KEY=VALUE, got "not a line"`) {
		t.Errorf("bad env file: %v", err)
	}
}

func TestLoadConfigNamesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {"fs": {"command": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadConfig(p, ConfigOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "gateway: servers.json:1:35: mcpServers.fs.command: want a string") {
		t.Fatalf("got %v", err)
	}
	if _, _, err := LoadConfig(dir, ConfigOptions{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder: got %v", err)
	}
}

func TestFilters(t *testing.T) {
	cfg := &Config{Allow: []string{"fs__*", "web__get"}, Deny: []string{"*__delete*"}}
	s := &ServerConfig{Allow: []string{"read*", "delete_file", "list"}, Deny: []string{"list"}}
	for _, c := range []struct {
		level         string
		keeps         func(string) bool
		kept, dropped []string
	}{
		{"top-level", cfg.keeps, []string{"fs__read", "web__get"}, []string{"fs__delete_file", "web__put"}},
		{"server", s.keeps, []string{"read_file", "delete_file"}, []string{"list", "write"}},
	} {
		for _, name := range c.kept {
			if !c.keeps(name) {
				t.Errorf("%s drops %q, want it kept", c.level, name)
			}
		}
		for _, name := range c.dropped {
			if c.keeps(name) {
				t.Errorf("%s keeps %q, want it dropped", c.level, name)
			}
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["a"], "env": {"A": "1"}, "allow": ["*"], "timeout": "3s"}}, "deny": ["x"]}`))
	f.Add([]byte(`{"mcpServers": {"w": {"type": "http", "url": "http://h", "headers": {"a": "b"}}}}`))
	f.Add([]byte(`{"mcpServers": {"a__b": {}}, "alow": 1}`))
	f.Add([]byte(`{"mcpServers": null}`))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "${HOME}", "args": ["${X:-y}", "${"], "env": {"K": "${TOKEN}"}, "denied": []}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"url": "${MCP_URL}", "headers": {"A": "${env:TOKEN}"}, "autoApprove": 1}}, "deny_list": 2}`))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "inheritEnv": true, "excludeTools": ["*"]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := ParseConfig("f.json", data, ConfigOptions{LookupEnv: testEnv})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "gateway: f.json:") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if len(cfg.Servers) == 0 {
			t.Fatal("a config without servers passed")
		}
		for _, s := range cfg.Servers {
			if checkServerName(s.Name) != nil || (s.Command == "") == (s.URL == "") || s.Timeout <= 0 {
				t.Fatalf("bad server passed: %+v", s)
			}
		}
	})
}
