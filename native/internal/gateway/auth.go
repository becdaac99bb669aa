package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Limits of a tokens file.
const (
	maxTokensBytes  = 1 << 20
	maxTokenClients = 10000
	maxClientName   = 64
	// minTokenLen is the shortest token accepted: 32 characters, what `openssl rand -hex 16`
	// prints, 128 bits when random. A short token is a password someone typed, and a gateway
	// beyond loopback runs its servers' tools for whoever guesses it.
	minTokenLen = 32
	maxTokenLen = 4096
)

// Tokens are the bearer tokens of the HTTP front's clients, one per named client. A client is
// who a session's traces are from (Trace.Source "client:NAME") and whose allow and deny of the
// config's "clients" apply. Only the tokens' SHA-256 sums are kept.
type Tokens struct {
	clients []tokenClient // in file order
}

type tokenClient struct {
	name string
	sum  [sha256.Size]byte
}

// Names are the clients' names in file order.
func (t *Tokens) Names() []string {
	out := make([]string, len(t.clients))
	for i, c := range t.clients {
		out[i] = c.name
	}
	return out
}

// lookup returns the client whose token this is. It compares the token's sum with every
// client's, without stopping at a match, so that the time it takes tells nothing about which
// tokens exist or how much of one was right.
func (t *Tokens) lookup(token string) (string, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range t.clients {
		if subtle.ConstantTimeCompare(sum[:], t.clients[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return t.clients[found].name, true
}

// LoadTokens reads a tokens file (ParseTokens). A file others can read is a warning: the
// tokens are what stands between the network and the servers' tools.
func LoadTokens(file string) (*Tokens, []string, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: tokens: %w", err)
	}
	if err := checkSmallFile("tokens", file, fi, maxTokensBytes); err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: tokens: %w", err)
	}
	t, err := ParseTokens(file, data)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	if fi.Mode().Perm()&0o077 != 0 {
		warnings = append(warnings, fmt.Sprintf("gateway: tokens %s: readable by others (mode %v); chmod 600 it", file, fi.Mode().Perm()))
	}
	return t, warnings, nil
}

// ParseTokens reads the lines of a tokens file, name is the file's name for messages: one
// client a line as "NAME TOKEN" (blanks between), blank lines and lines starting with '#'
// skipped. A name is 1 to 64 of A-Z a-z 0-9 _ - . (it is written into traces as
// "client:NAME"); a token is 32 to 4096 characters of RFC 6750's b64token (A-Z a-z 0-9 - . _
// ~ + / =). Names and tokens must not repeat: two clients with one token could not be told
// apart. Errors name the file and line, never the token.
func ParseTokens(name string, data []byte) (*Tokens, error) {
	t := &Tokens{}
	names := map[string]int{}
	sums := map[[sha256.Size]byte]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("gateway: %s:%d: want NAME TOKEN, got %d fields", name, n, len(fields))
		}
		client, token := fields[0], fields[1]
		if err := checkClientName(client); err != nil {
			return nil, fmt.Errorf("gateway: %s:%d: %v", name, n, err)
		}
		if err := checkToken(token); err != nil {
			return nil, fmt.Errorf("gateway: %s:%d: client %s: %v", name, n, client, err)
		}
		if at, dup := names[client]; dup {
			return nil, fmt.Errorf("gateway: %s:%d: client %s is named on line %d too", name, n, client, at)
		}
		sum := sha256.Sum256([]byte(token))
		if at, dup := sums[sum]; dup {
			return nil, fmt.Errorf("gateway: %s:%d: client %s has the token of line %d; each client needs its own", name, n, client, at)
		}
		if len(t.clients) == maxTokenClients {
			return nil, fmt.Errorf("gateway: %s:%d: more than %d clients", name, n, maxTokenClients)
		}
		names[client], sums[sum] = n, n
		t.clients = append(t.clients, tokenClient{name: client, sum: sum})
	}
	if len(t.clients) == 0 {
		return nil, fmt.Errorf("gateway: %s: no clients (want a line NAME TOKEN for each)", name)
	}
	return t, nil
}

// checkClientName checks a client's name, in a tokens file or the config's "clients".
func checkClientName(name string) error {
	if name == "" || len(name) > maxClientName {
		return fmt.Errorf("a client name has 1 to %d characters", maxClientName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("a client name may hold only letters, digits, '_', '-' and '.', not %q", r)
		}
	}
	return nil
}

func checkToken(token string) error {
	if len(token) < minTokenLen || len(token) > maxTokenLen {
		return fmt.Errorf("the token has %d characters, want %d to %d (openssl rand -hex 32 makes one)", len(token), minTokenLen, maxTokenLen)
	}
	for i := range len(token) {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0) {
			return fmt.Errorf("the token's character %d is not one of A-Z a-z 0-9 - . _ ~ + / =", i+1)
		}
	}
	return nil
}

// authRealm is the realm of the front's WWW-Authenticate challenge.
const authRealm = `Bearer realm="caskg-gateway"`

// requireToken is the front's Guard when it has Tokens: a request to /mcp without a known
// bearer token gets 401 and reaches nothing. The client's name goes into the request as the
// SDK's auth.TokenInfo, whose UserID the SDK binds a new session to: a request with another
// client's token and that session's id is refused (403), so a leaked session id does not
// change whose session it is.
func (g *Gateway) requireToken(next http.Handler) http.Handler {
	tokens := g.opt.Tokens
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		name, ok := tokens.lookup(token)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: name}, nil
	}
	inner := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Checked here as well as by the SDK, which sends no challenge without OAuth metadata.
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", authRealm)
			http.Error(w, "Unauthorized: this gateway wants Authorization: Bearer TOKEN (one of --auth-tokens)", http.StatusUnauthorized)
			return
		}
		if _, ok := tokens.lookup(strings.TrimSpace(token)); !ok {
			w.Header().Set("WWW-Authenticate", authRealm+`, error="invalid_token"`)
			http.Error(w, "Unauthorized: the bearer token is not one of --auth-tokens", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// clientOf is the client a request to the front authenticated as; "" without tokens.
func clientOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// CheckBind refuses an HTTP front on a non-loopback address without tokens: every session's
// calls would run the servers' tools for anyone who reaches the port, and its traces would
// teach the graph what anyone wants.
func CheckBind(addr net.Addr, tokens *Tokens) error {
	if tokens != nil || isLoopbackAddr(addr) {
		return nil
	}
	return fmt.Errorf("gateway: %s is reachable beyond this machine and the gateway has no tokens: "+
		"give --auth-tokens FILE (a line NAME TOKEN per client; or CASKG_GATEWAY_TOKENS=FILE), or bind 127.0.0.1", addr)
}

func isLoopbackAddr(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost")
}

// errNoTokens is for a client filter without tokens.
var errNoTokens = errors.New("no client is known without --auth-tokens")

// ClientWarnings are the problems of the config's "clients" under tokens (nil: no tokens):
// a client the tokens do not name never connects, so its filter is a typo or a leftover.
func ClientWarnings(cfg *Config, tokens *Tokens) []string {
	var out []string
	for _, name := range cfg.clientNames() {
		switch {
		case tokens == nil:
			out = append(out, fmt.Sprintf("gateway: config: clients.%s: %v; its allow and deny apply to no one", name, errNoTokens))
		case !slices.Contains(tokens.Names(), name):
			out = append(out, fmt.Sprintf("gateway: config: clients.%s: not a client of the tokens file; its allow and deny apply to no one", name))
		}
	}
	return out
}
