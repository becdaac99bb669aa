package gateway

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caskg/caskg/graphs/jsontext"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/wasm/engine"
)

// Limits of a configuration.
const (
	maxConfigBytes    = 4 << 20 // of the servers file
	maxServerNameLen  = 64      // runes of a server name (the namespace of its tools)
	defaultTimeout    = 60 * time.Second
	maxTimeout        = time.Hour
	maxConfigServers  = 1000
	maxPatternsPerSet = 1000
)

// Config is a parsed servers file: the mcpServers map Claude Desktop, Claude Code and Cursor
// read, plus the gateway's filters.
type Config struct {
	Servers []ServerConfig // sorted by name
	// Allow and Deny are globs over namespaced names (SERVER__TOOL). A tool is kept when it
	// matches some Allow pattern (or Allow is empty) and no Deny pattern. The globs are
	// engine.Filter's: '*' any run of characters ('/' too), '?' one, case not counting.
	Allow, Deny []string
	// Clients narrow what each client of the HTTP front (by its name in the tokens file) sees
	// and calls, after the filters above: allow and deny over SERVER__TOOL.
	Clients map[string]ClientConfig
}

// ClientConfig is one client's filter: globs over SERVER__TOOL, as Config's.
type ClientConfig struct {
	Allow, Deny []string
}

// keeps reports whether the client's filter keeps a namespaced name.
func (c ClientConfig) keeps(name string) bool { return filtered(c.Allow, c.Deny, name) }

// clientNames are the configured clients, sorted.
func (c *Config) clientNames() []string {
	return slices.Sorted(maps.Keys(c.Clients))
}

// ServerConfig is one downstream server: a command to run (stdio) or a URL (streamable HTTP).
type ServerConfig struct {
	Name string

	Command string
	Args    []string
	// Env is the server's environment beyond the safe list (SafeEnv): envFile's variables,
	// then env's over them. With InheritEnv the server gets all of the gateway's environment
	// under these.
	Env        map[string]string
	InheritEnv bool
	Cwd        string

	URL     string
	Headers map[string]string

	// Allow and Deny are globs over the server's own tool names.
	Allow, Deny []string
	Timeout     time.Duration // of starting, listing and each call; defaultTimeout when unset
}

// http reports whether the server is reached over streamable HTTP rather than stdio.
func (s *ServerConfig) http() bool { return s.URL != "" }

// keeps reports whether the server's own filters keep its tool name.
func (s *ServerConfig) keeps(tool string) bool { return filtered(s.Allow, s.Deny, tool) }

// keeps reports whether the top-level filters keep a namespaced name.
func (c *Config) keeps(name string) bool { return filtered(c.Allow, c.Deny, name) }

// filtered is the engine's matcher (engine.Filter), so that the configuration, search_tools'
// filter and a service's request filter read a pattern alike.
func filtered(allow, deny []string, name string) bool {
	f := engine.Filter{Allow: allow, Deny: deny}
	return f.Allows(name)
}

// ConfigOptions are how a servers file is read.
type ConfigOptions struct {
	// Lenient makes an unknown field a warning instead of an error.
	Lenient bool
	// LookupEnv expands ${VAR}; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// Dir is where a relative "envFile" is found: the servers file's folder (LoadConfig sets
	// it), else the working directory.
	Dir string
}

// LoadConfig reads and parses a servers file. Warnings are fields that other MCP clients know
// and the gateway ignores (and, with opt.Lenient, every unknown field).
func LoadConfig(file string, opt ConfigOptions) (*Config, []string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: config: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: config: %w", err)
	}
	if err := checkSmallFile("config", file, fi, maxConfigBytes); err != nil {
		return nil, nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, nil, fmt.Errorf("gateway: config: %w", err)
	}
	if opt.Dir == "" {
		opt.Dir = filepath.Dir(file)
	}
	return ParseConfig(filepath.Base(file), data, opt)
}

// checkSmallFile holds fi, what Stat says of file, to a regular file of at most limit bytes;
// what names the file's role in the messages ("config", "tokens").
func checkSmallFile(what, file string, fi os.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("gateway: %s %s: not a regular file", what, file)
	}
	if fi.Size() > limit {
		return fmt.Errorf("gateway: %s %s: %d bytes, at most %d", what, file, fi.Size(), limit)
	}
	return nil
}

// ParseConfig parses the JSON of a servers file; name is the file's name for messages.
//
// Every error names the file, the line and column, and the JSON path of the field
// ("gateway: servers.json:4:21: mcpServers.fs.args[2]: want a string, got a number").
// An unknown field is an error naming the known field nearest to it ("allowed" → "allow"),
// since a misspelt "deny" would silently expose tools; a field another MCP client reads
// (otherClients: "autoApprove", "disabled") is a warning, so that the file Claude Desktop or
// Cursor already reads works unchanged. ${VAR} and ${VAR:-default} are expanded in command,
// args, env, cwd, url, headers and envFile, as Claude Code and Cursor do.
func ParseConfig(name string, data []byte, opt ConfigOptions) (*Config, []string, error) {
	if opt.LookupEnv == nil {
		opt.LookupEnv = os.LookupEnv
	}
	p := &cfgParser{file: name, data: data, d: jsontext.NewDecoder(data), opt: opt}
	cfg, err := p.config()
	if err != nil {
		return nil, nil, err
	}
	return cfg, p.warnings, nil
}

type cfgParser struct {
	opt      ConfigOptions
	file     string
	data     []byte
	d        *jsontext.Decoder
	warnings []string
}

// errorf is an error at the decoder's position about the field at jpath.
func (p *cfgParser) errorf(jpath string, format string, a ...any) error {
	return p.errorAt(p.offset(), jpath, fmt.Sprintf(format, a...))
}

func (p *cfgParser) errorAt(off int, jpath, msg string) error {
	line, col := lineCol(p.data, off)
	loc := fmt.Sprintf("%s:%d:%d", p.file, line, col)
	if jpath == "" {
		return fmt.Errorf("gateway: %s: %s", loc, msg)
	}
	return fmt.Errorf("gateway: %s: %s: %s", loc, jpath, msg)
}

// wrap turns a decoder error into one naming jpath.
func (p *cfgParser) wrap(jpath string, err error) error {
	var se *jsontext.SyntaxError
	if errors.As(err, &se) {
		if se.Field != "" && (jpath == "" || strings.HasPrefix(se.Field, jpath+".")) {
			jpath = se.Field // deeper than the caller knew: a repeated key, say
		}
		return p.errorAt(se.Offset, jpath, se.Msg)
	}
	return err
}

// offset is the decoder's position: the start of the next value.
func (p *cfgParser) offset() int {
	// The decoder keeps its position private; Peek skips blanks and SyntaxError reports where.
	p.d.Peek()
	var se *jsontext.SyntaxError
	if errors.As(p.probe(), &se) {
		return se.Offset
	}
	return len(p.data)
}

// probe makes an error at the decoder's position without consuming anything: UnknownField
// reports the current offset.
func (p *cfgParser) probe() error { return p.d.UnknownField() }

func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + strings.Count(string(data[:off]), "\n")
	col := off - strings.LastIndexByte(string(data[:off]), '\n')
	return line, col
}

func (p *cfgParser) config() (*Config, error) {
	cfg := &Config{}
	var hasServers bool
	if c := p.d.Peek(); c != '{' {
		return nil, p.errorf("", "want a JSON object with \"mcpServers\", got %s", describe(c))
	}
	err := p.fields("", func(key, _ string) error {
		switch key {
		case "mcpServers":
			hasServers = true
			return p.servers(cfg)
		case "allow":
			return p.patterns(key, &cfg.Allow)
		case "deny":
			return p.patterns(key, &cfg.Deny)
		case "clients":
			return p.clients(cfg)
		}
		return p.unknown("", key, topFields)
	})
	if err != nil {
		return nil, p.wrap("", err)
	}
	if err := p.d.End(); err != nil {
		return nil, p.wrap("", err)
	}
	if !hasServers {
		return nil, p.errorAt(0, "", `no "mcpServers" object`)
	}
	if len(cfg.Servers) == 0 {
		return nil, p.errorAt(0, "mcpServers", "no servers (all absent or disabled)")
	}
	sort.Slice(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].Name < cfg.Servers[j].Name })
	return cfg, nil
}

var topFields = []string{"mcpServers", "allow", "deny", "clients"}

var clientFields = []string{"allow", "deny"}

// clients reads "clients": {"NAME": {"allow": [...], "deny": [...]}}, NAME as in the tokens
// file. An unknown field in a client's entry is an error as in a server's: a misspelt "deny"
// would let the client call what it must not.
func (p *cfgParser) clients(cfg *Config) error {
	if c := p.d.Peek(); c != '{' {
		return p.errorf("clients", "want an object of clients by name, got %s", describe(c))
	}
	cfg.Clients = map[string]ClientConfig{}
	return p.d.Object(func(name string) error {
		jpath := "clients." + name
		if err := checkClientName(name); err != nil {
			return p.errorf(jpath, "%v", err)
		}
		if len(cfg.Clients) == maxTokenClients {
			return p.errorf(jpath, "more than %d clients", maxTokenClients)
		}
		if c := p.d.Peek(); c != '{' {
			return p.errorf(jpath, "want an object with \"allow\" or \"deny\", got %s", describe(c))
		}
		var cc ClientConfig
		err := p.fields(jpath, func(key, fp string) error {
			switch key {
			case "allow":
				return p.patterns(fp, &cc.Allow)
			case "deny":
				return p.patterns(fp, &cc.Deny)
			}
			return p.unknown(jpath, key, clientFields)
		})
		if err != nil {
			return p.wrap(jpath, err)
		}
		cfg.Clients[name] = cc
		return nil
	})
}

var serverFields = []string{"command", "args", "env", "envFile", "inheritEnv", "cwd", "url", "headers", "type",
	"allow", "deny", "timeout", "disabled"}

// otherClients are the fields other MCP clients read in the same file, by the object they
// appear in ("" the top level, "server" a server entry), with whose they are. The gateway
// ignores them with a warning, so that a file those clients read loads unchanged. A field
// that hides tools elsewhere is not among them: ignoring it would expose what the file means
// to hide, so it is an error (filterFields).
var otherClients = map[string]map[string]string{
	"": {
		"globalShortcut": "Claude Desktop", "preferences": "Claude Desktop", "inputs": "VS Code",
		"$schema": "editors",
	},
	"server": {
		"autoApprove": "Cline", "transportType": "Cline", "alwaysAllow": "Roo Code", "watchPaths": "Roo Code",
		"trust": "Gemini CLI", "description": "Gemini CLI", "oauth": "Claude Code and Gemini CLI",
		"headersHelper": "Claude Code", "auth": "Cursor", "dev": "VS Code", "sandbox": "VS Code",
	},
}

// filterFields are other clients' tool filters, which the gateway does not read: an error
// naming the gateway's own field.
var filterFields = map[string]string{
	"includeTools": "allow", "excludeTools": "deny", "disabledTools": "deny",
}

// unknown handles an unknown field of the object at parent (level "" or "server"): a warning
// when another client reads it, else an error naming the nearest known field, or with
// --lenient a warning; its value is skipped.
func (p *cfgParser) unknown(parent, key string, known []string) error {
	jpath := join(parent, key)
	level := ""
	switch {
	case strings.HasPrefix(parent, "mcpServers."):
		level = "server"
	case parent != "":
		level = "client" // no other client's fields: an unknown one is an error
	}
	at := p.offset()
	line, col := lineCol(p.data, at)
	var msg string
	if use, ok := filterFields[key]; ok && level == "server" {
		msg = fmt.Sprintf("%q is another client's tool filter, which the gateway does not read; use %q", key, use)
	} else if who, ok := otherClients[level][key]; ok {
		p.warnings = append(p.warnings, fmt.Sprintf("gateway: %s:%d:%d: %s: a field of %s, ignored", p.file, line, col, jpath, who))
		return p.wrap(jpath, p.d.Skip())
	} else if near := nearestField(key, known); near != "" {
		msg = fmt.Sprintf("unknown field; did you mean %q?", near)
	} else {
		msg = "unknown field; the known fields are " + strings.Join(known, ", ")
	}
	if !p.opt.Lenient {
		return p.errorAt(at, jpath, msg)
	}
	p.warnings = append(p.warnings, fmt.Sprintf("gateway: %s:%d:%d: %s: %s (--lenient: ignored)", p.file, line, col, jpath, msg))
	return p.wrap(jpath, p.d.Skip())
}

// fieldAliases are names of other tools' configurations for the gateway's fields, which no
// edit distance finds.
var fieldAliases = map[string]string{
	"cmd": "command", "arguments": "args", "environment": "env", "dir": "cwd", "workdir": "cwd",
	"blocklist": "deny", "blacklist": "deny", "block": "deny", "exclude": "deny",
	"whitelist": "allow", "include": "allow", "endpoint": "url",
}

// nearestField is the known field key most likely stands for, or "": key and the known
// fields compare in lower case without '_' and '-', and a known field is near when key starts
// with it ("denyList", "deny_list", "allowed"), they share all of it but its last letter
// ("denied"), or they are within one edit per three letters ("alow").
func nearestField(key string, known []string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	k := norm(key)
	if a, ok := fieldAliases[k]; ok && slices.Contains(known, a) {
		return a
	}
	best, bestD := "", 0
	for _, f := range known {
		nf := norm(f)
		var d int
		switch {
		case k == nf:
			d = 0
		case len(nf) >= 3 && strings.HasPrefix(k, nf):
			d = 1
		case len(nf) >= 4 && len(k) >= len(nf)-1 && strings.HasPrefix(k, nf[:len(nf)-1]):
			d = 2
		default:
			d = cmdline.EditDistance(k, nf)
			if d > max(1, len(k)/3) {
				continue
			}
			d += 2
		}
		if best == "" || d < bestD {
			best, bestD = f, d
		}
	}
	return best
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (p *cfgParser) servers(cfg *Config) error {
	if c := p.d.Peek(); c != '{' {
		return p.errorf("mcpServers", "want an object of servers by name, got %s", describe(c))
	}
	// A server named twice is refused by the decoder (a key given twice), naming it.
	n := 0
	return p.d.Object(func(name string) error {
		jpath := "mcpServers." + name
		if err := checkServerName(name); err != nil {
			return p.errorf(jpath, "%v", err)
		}
		if n++; n > maxConfigServers {
			return p.errorf(jpath, "more than %d servers", maxConfigServers)
		}
		s, disabled, err := p.server(jpath, name)
		if err != nil {
			return err
		}
		if !disabled {
			cfg.Servers = append(cfg.Servers, s)
		}
		return nil
	})
}

// checkServerName checks that name can stand before "__" in a tool name: the characters MCP
// allows in tool names but ".", no "__" inside and no "_" at either end, so that
// SERVER__TOOL splits at its first "__".
func checkServerName(name string) error {
	switch {
	case name == "":
		return errors.New("a server name must not be empty")
	case len([]rune(name)) > maxServerNameLen:
		return fmt.Errorf("a server name has at most %d characters", maxServerNameLen)
	case strings.Contains(name, "__"):
		return errors.New(`a server name must not contain "__" (it separates server and tool in SERVER__TOOL)`)
	case strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_"):
		return errors.New(`a server name must not start or end with "_"`)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("a server name may hold only letters, digits, '_' and '-', not %q", r)
		}
	}
	return nil
}

func (p *cfgParser) server(jpath, name string) (ServerConfig, bool, error) {
	s := ServerConfig{Name: name}
	if c := p.d.Peek(); c != '{' {
		return s, false, p.errorf(jpath, "want an object with \"command\" or \"url\", got %s", describe(c))
	}
	start := p.offset()
	var typ string
	var disabled bool
	var env, fileEnv map[string]string
	err := p.fields(jpath, func(key, fp string) error {
		var err error
		switch key {
		case "command":
			at := p.offset()
			s.Command, err = p.expStr(fp)
			if err == nil && s.Command == "" {
				err = p.errorAt(at, fp, "must not be empty")
			}
		case "args":
			s.Args, err = p.strings(fp)
		case "env":
			env, err = p.strMap(fp)
		case "envFile":
			at := p.offset()
			var file string
			if file, err = p.expStr(fp); err == nil {
				fileEnv, err = p.envFile(at, fp, file)
			}
		case "inheritEnv":
			s.InheritEnv, err = p.d.Bool()
			err = p.wrap(fp, err)
		case "cwd":
			s.Cwd, err = p.expStr(fp)
		case "url":
			at := p.offset()
			s.URL, err = p.expStr(fp)
			if err == nil {
				err = p.checkURL(at, fp, s.URL)
			}
		case "headers":
			s.Headers, err = p.strMap(fp)
		case "type":
			at := p.offset()
			typ, err = p.str(fp)
			if err == nil {
				switch typ {
				case "stdio", "http", "streamable-http", "streamableHttp":
				case "sse":
					err = p.errorAt(at, fp, `"sse" servers are not supported; the gateway speaks stdio and streamable HTTP`)
				default:
					err = p.errorAt(at, fp, fmt.Sprintf(`%q is not "stdio", "http" or "streamable-http"`, typ))
				}
			}
		case "allow":
			err = p.patterns(fp, &s.Allow)
		case "deny":
			err = p.patterns(fp, &s.Deny)
		case "timeout":
			var v string
			at := p.offset()
			if v, err = p.str(fp); err == nil {
				s.Timeout, err = time.ParseDuration(v)
				if err != nil || s.Timeout <= 0 || s.Timeout > maxTimeout {
					err = p.errorAt(at, fp, fmt.Sprintf("%q is not a duration in (0, %v], such as \"30s\"", short(v), maxTimeout))
				}
			}
		case "disabled":
			disabled, err = p.d.Bool()
			err = p.wrap(fp, err)
		default:
			err = p.unknown(jpath, key, serverFields)
		}
		return err
	})
	if err != nil {
		return s, false, p.wrap(jpath, err)
	}
	if len(fileEnv)+len(env) > 0 {
		s.Env = fileEnv
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		maps.Copy(s.Env, env)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return s, false, p.errorAt(start, jpath, `has both "command" and "url"; a server is one or the other`)
	case s.Command == "" && s.URL == "":
		return s, false, p.errorAt(start, jpath, `needs "command" (a stdio server) or "url" (a streamable-HTTP server)`)
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" || s.InheritEnv):
		return s, false, p.errorAt(start, jpath, `"args", "env", "envFile", "inheritEnv" and "cwd" are for stdio servers, and this one has a "url"`)
	case s.Command != "" && len(s.Headers) > 0:
		return s, false, p.errorAt(start, jpath, `"headers" are for HTTP servers, and this one has a "command"`)
	case typ == "stdio" && s.URL != "":
		return s, false, p.errorAt(start, jpath, `"type" is "stdio" but the server has a "url"`)
	case typ != "" && typ != "stdio" && s.Command != "":
		return s, false, p.errorAt(start, jpath, fmt.Sprintf(`"type" is %q but the server has a "command"`, typ))
	}
	if s.Timeout == 0 {
		s.Timeout = defaultTimeout
	}
	return s, disabled, nil
}

func (p *cfgParser) checkURL(at int, jpath, u string) error {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return p.errorAt(at, jpath, strconv.Quote(short(u))+" is not an http:// or https:// URL")
	}
	return nil
}

func (p *cfgParser) str(jpath string) (string, error) {
	at := p.offset()
	v, err := p.d.String()
	if err != nil {
		return "", p.errorAt(at, jpath, "want a string, got "+describe(p.d.Peek()))
	}
	return v, nil
}

func (p *cfgParser) strings(jpath string) ([]string, error) {
	if c := p.d.Peek(); c != '[' {
		return nil, p.errorf(jpath, "want an array of strings, got %s", describe(c))
	}
	out := []string{}
	err := p.d.Array(func(i int) error {
		v, err := p.expStr(fmt.Sprintf("%s[%d]", jpath, i))
		out = append(out, v)
		return err
	})
	return out, p.wrap(jpath, err)
}

// fields reads the object at jpath ("" for the top), calling field with each key and its path
// (jpath.key; the key itself at the top); a key given twice is an error naming it.
func (p *cfgParser) fields(jpath string, field func(key, fp string) error) error {
	seen := map[string]bool{}
	return p.d.Object(func(key string) error {
		fp := key
		if jpath != "" {
			fp = jpath + "." + key
		}
		if seen[key] {
			return p.errorf(fp, "duplicate field")
		}
		seen[key] = true
		return field(key, fp)
	})
}

func (p *cfgParser) strMap(jpath string) (map[string]string, error) {
	if c := p.d.Peek(); c != '{' {
		return nil, p.errorf(jpath, "want an object of strings, got %s", describe(c))
	}
	out := map[string]string{}
	err := p.d.Object(func(key string) error {
		fp := jpath + "." + key
		if _, dup := out[key]; dup {
			return p.errorf(fp, "duplicate field")
		}
		v, err := p.expStr(fp)
		out[key] = v
		return err
	})
	return out, p.wrap(jpath, err)
}

// expStr reads a string and expands the variables in it (expand), an error naming the
// variable and the field.
func (p *cfgParser) expStr(jpath string) (string, error) {
	at := p.offset()
	v, err := p.str(jpath)
	if err != nil {
		return "", err
	}
	v, err = expand(v, p.opt.LookupEnv)
	if err != nil {
		return "", p.errorAt(at, jpath, err.Error())
	}
	return v, nil
}

// expand replaces ${VAR} in s with the variable's value and ${VAR:-default} with it or, when
// it is unset or empty, with default, as Claude Code does (Cursor's ${env:VAR} too). An unset
// ${VAR} without a default is an error naming it: a header "Bearer ${API_TOKEN}" sent as
// written, or an empty token, fails far from its cause. "$" not followed by "{" stays.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q has \"${\" without a closing \"}\"", short(s[i:]))
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not a variable name (letters, digits and '_', not starting with a digit)", short(ref), short(name))
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fmt.Errorf("${%s} is not set (give a default with ${%s:-value})", name, name)
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

func validVarName(name string) bool {
	for i := range len(name) {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}

// maxEnvFileBytes bounds an envFile.
const maxEnvFileBytes = 1 << 20

// envFile reads the KEY=VALUE lines of an env file (a ".env"): blank lines and lines starting
// with '#' skipped, "export " before a key allowed, a value in matching quotes unquoted. A
// relative path is relative to the servers file's folder. Values are taken as written.
func (p *cfgParser) envFile(at int, jpath, file string) (map[string]string, error) {
	if file == "" {
		return nil, p.errorAt(at, jpath, "must not be empty")
	}
	if !filepath.IsAbs(file) && p.opt.Dir != "" {
		file = filepath.Join(p.opt.Dir, file)
	}
	fi, err := os.Stat(file)
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	} else if err == nil && fi.Size() > maxEnvFileBytes {
		err = fmt.Errorf("%d bytes, at most %d", fi.Size(), maxEnvFileBytes)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, p.errorAt(at, jpath, fmt.Sprintf("%s: %v", file, err))
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k = strings.TrimSpace(k)
		if !ok || !validVarName(k) {
			return nil, p.errorAt(at, jpath, fmt.Sprintf("%s:%d: want KEY=VALUE, got %q", file, i+1, short(line)))
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out, nil
}

// patterns reads a list of globs (engine.Filter's syntax), refusing malformed ones.
func (p *cfgParser) patterns(jpath string, dst *[]string) error {
	if c := p.d.Peek(); c != '[' {
		return p.errorf(jpath, "want an array of globs, got %s", describe(c))
	}
	list := []string{}
	err := p.d.Array(func(i int) error {
		ep := fmt.Sprintf("%s[%d]", jpath, i)
		if i == maxPatternsPerSet {
			return p.errorf(ep, "more than %d patterns", maxPatternsPerSet)
		}
		at := p.offset()
		pat, err := p.str(ep)
		if err != nil {
			return err
		}
		if why := engine.GlobProblem(pat); why != "" {
			return p.errorAt(at, ep, strconv.Quote(short(pat))+" is not a glob: "+why)
		}
		list = append(list, pat)
		return nil
	})
	if err != nil {
		return p.wrap(jpath, err)
	}
	*dst = slices.Clip(list)
	return nil
}

// describe names the kind of the JSON value starting with c.
func describe(c byte) string {
	if c == 0 {
		return "the end of the input"
	}
	switch c {
	case '{', '[', '"', 't', 'f', 'n':
		return jsontext.Kind([]byte{c})
	}
	if c == '-' || c >= '0' && c <= '9' {
		return "a number"
	}
	return strconv.QuoteRune(rune(c))
}

// short cuts a value quoted in a message to a readable prefix.
func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}
