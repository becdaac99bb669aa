package service

import (
	"strconv"
	"strings"

	"github.com/caskg/caskg/wasm/internal/sha256"
)

// Who may report feedback, and under which name. A report is evidence a build learns from
// (native/internal/builder counts it once per reporter, and only where two reporters agree), so a host
// names the reporter of every report it keeps (Feedback.Source), and beyond loopback takes
// reports only from holders of a bearer token. The rules (FeedbackAuth.Check):
//
//   - with Tokens, every report needs "Authorization: Bearer TOKEN" with one of them; its source
//     is "token:NAME", the token's name, never the token;
//   - without Tokens, a host only this machine reaches (a loopback address, stdio) takes every
//     report as FeedbackAuth.Local ("loopback", "mcp:stdio"): one reporter, however many
//     clients;
//   - without Tokens, a host reached beyond loopback (the edge worker always) takes none.

// Token limits. A token is RFC 6750's b64token (letters, digits and -._~+/, then = padding),
// long enough not to be guessed: 16 characters at least (openssl rand -hex 16 gives 32).
const (
	minTokenBytes   = 16
	maxTokenBytes   = 512
	maxReporterName = 64
)

const (
	// TokensEnv is the variable (a worker secret, or caskg serve's environment) that holds
	// tokens in ParseTokens' format.
	TokensEnv = "CASKG_FEEDBACK_TOKENS"
	// LoopbackSource is the source of reports a loopback host takes without tokens.
	LoopbackSource = "loopback"
)

// Tokens are the bearer tokens of the reporters that may report feedback, by reporter name.
// Only their SHA-256 is kept, and a presented token is compared with every one in constant time.
type Tokens struct {
	names []string
	sums  [][sha256.Size]byte // wasm/internal/sha256: crypto/sha256 costs the worker 48 KB
}

// ParseTokens reads tokens in the format of a tokens file (caskg serve --feedback-tokens FILE,
// the variable TokensEnv): one "NAME TOKEN" a line, blank lines and lines starting with # left
// out; a ';' also ends a line, so that a variable holds several on one line. A name is 1 to 64
// letters, digits and ._@- ; names and tokens are unique. Errors name src and the line.
func ParseTokens(src, data string) (*Tokens, error) {
	t := &Tokens{}
	lineOf := map[string]int{} // name or token hash → its line
	bad := func(line int, msg string) error {
		return &tokensError{src + ":" + strconv.Itoa(line) + ": " + msg}
	}
	line := 0
	for _, text := range strings.Split(strings.ReplaceAll(data, ";", "\n"), "\n") {
		line++
		text = strings.TrimSpace(strings.TrimSuffix(text, "\r"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, bad(line, "want NAME TOKEN, got "+strconv.Itoa(len(f))+" fields")
		}
		name, tok := f[0], f[1]
		if err := checkName(name); err != "" {
			return nil, bad(line, err)
		}
		if err := checkToken(tok); err != "" {
			return nil, bad(line, "token of "+strconv.Quote(name)+": "+err)
		}
		sum := sha256.Sum(tok)
		if l, dup := lineOf["n"+name]; dup {
			return nil, bad(line, "name "+strconv.Quote(name)+" already on line "+strconv.Itoa(l))
		}
		if l, dup := lineOf["t"+string(sum[:])]; dup {
			return nil, bad(line, "the token of "+strconv.Quote(name)+" is already on line "+strconv.Itoa(l)+": each reporter needs its own")
		}
		lineOf["n"+name], lineOf["t"+string(sum[:])] = line, line
		t.names = append(t.names, name)
		t.sums = append(t.sums, sum)
	}
	if len(t.names) == 0 {
		return nil, &tokensError{src + ": no tokens (want lines NAME TOKEN)"}
	}
	return t, nil
}

type tokensError struct{ msg string }

func (e *tokensError) Error() string { return "service: tokens " + e.msg }

func checkName(name string) string {
	if len(name) > maxReporterName {
		return "name of " + strconv.Itoa(len(name)) + " bytes, at most " + strconv.Itoa(maxReporterName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r)) {
			return "name " + strconv.Quote(Echo(name)) + ": only letters, digits and ._@- "
		}
	}
	return ""
}

// checkToken holds a token to b64token and the length limits. Its text is never repeated.
func checkToken(tok string) string {
	switch {
	case len(tok) < minTokenBytes:
		return strconv.Itoa(len(tok)) + " characters, at least " + strconv.Itoa(minTokenBytes)
	case len(tok) > maxTokenBytes:
		return strconv.Itoa(len(tok)) + " characters, at most " + strconv.Itoa(maxTokenBytes)
	}
	body := strings.TrimRight(tok, "=")
	if body == "" {
		return "only '=' padding"
	}
	for _, r := range body {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/", r)) {
			return "a character outside letters, digits and -._~+/ (then = padding)"
		}
	}
	return ""
}

// Len is how many tokens there are.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.names)
}

// name returns the reporter whose token tok is. Every token's hash is compared, in constant
// time, whichever matches: the time taken tells nothing of which one did, or how much of one.
func (t *Tokens) name(tok string) (string, bool) {
	sum := sha256.Sum(tok)
	found := -1
	for k := range t.sums {
		if sha256.Equal(&sum, &t.sums[k]) {
			found = k
		}
	}
	if found < 0 {
		return "", false
	}
	return t.names[found], true
}

// FeedbackAuth decides who may report feedback and names each report's source. The zero value
// takes no report: a host reached beyond loopback, without tokens.
type FeedbackAuth struct {
	Tokens *Tokens // the reporters' bearer tokens; nil: none
	// Local, for a host only this machine reaches, is the source of reports taken without
	// tokens (LoopbackSource, "mcp:stdio"); "" for a host reached beyond loopback.
	Local string
}

// AuthError is a report refused for who sent it: 401 with Challenge as WWW-Authenticate for a
// missing or wrong token, 403 on a host that takes no reports without tokens and has none.
type AuthError struct {
	Status    int
	Challenge string // the WWW-Authenticate value; "" for a 403
	msg       string
}

func (e *AuthError) Error() string { return "service: " + e.msg }

// Check returns the source of a report whose request carried the Authorization header value
// authorization ("" when it had none), or an *AuthError.
func (a FeedbackAuth) Check(authorization string) (string, error) {
	if a.Tokens.Len() == 0 {
		if a.Local != "" {
			return a.Local, nil
		}
		return "", &AuthError{Status: 403, msg: "feedback is taken beyond loopback only with a bearer " +
			"token, and this server has none (caskg serve --feedback-tokens FILE; the worker's secret " + TokensEnv + ")"}
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	tok = strings.TrimSpace(tok)
	if authorization == "" {
		return "", &AuthError{Status: 401, Challenge: `Bearer realm="caskg feedback"`,
			msg: "feedback needs a bearer token: send Authorization: Bearer TOKEN"}
	}
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", &AuthError{Status: 401, Challenge: `Bearer realm="caskg feedback", error="invalid_request"`,
			msg: "feedback needs Authorization: Bearer TOKEN"}
	}
	name, ok := a.Tokens.name(tok)
	if !ok {
		return "", &AuthError{Status: 401, Challenge: `Bearer realm="caskg feedback", error="invalid_token"`,
			msg: "the bearer token is not one of this server's feedback tokens"}
	}
	return "token:" + name, nil
}
