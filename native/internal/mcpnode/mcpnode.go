// Package mcpnode lets tests drive caskg's MCP fronts with real parts from npm: the official
// TypeScript SDK's Client (through our driver, mcpclient.mjs), the MCP conformance suite and
// the reference servers, run by the Node 22 that make mcp-npm installs into .cache/mcp-npm. It
// is imported by _test.go files only.
//
// Find locates them as the other end-to-end tests locate workerd and Chromium: make exports
// CASKG_NODE22 and CASKG_MCP_NPM, and when they are set what they name must be there (the test
// fails otherwise), so under make test nothing is skipped; without them Find looks in the
// module's .cache/mcp-npm and skips the test when that is absent.
package mcpnode

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/syncio"
)

//go:embed mcpclient.mjs
var driver []byte

// Env is an installed npm cache.
type Env struct {
	Node string // a Node >= 22 binary
	NPM  string // the folder holding node_modules
}

// Find returns the npm cache of make mcp-npm, failing tb when CASKG_NODE22 or CASKG_MCP_NPM
// names something missing, and skipping it when neither is set and the module has no cache.
func Find(tb testing.TB) Env {
	tb.Helper()
	node, npm := os.Getenv("CASKG_NODE22"), os.Getenv("CASKG_MCP_NPM")
	if node != "" || npm != "" {
		e := Env{Node: node, NPM: npm}
		if err := e.check(); err != nil {
			tb.Fatalf("mcpnode: CASKG_NODE22=%q CASKG_MCP_NPM=%q: %v; run make mcp-npm", node, npm, err)
		}
		return e
	}
	root, err := moduleRoot()
	if err != nil {
		tb.Fatalf("mcpnode: %v", err)
	}
	arch := "x64"
	if runtime.GOARCH == "arm64" {
		arch = "arm64"
	}
	dir := filepath.Join(root, ".cache", "mcp-npm")
	e := Env{Node: filepath.Join(dir, "node_modules", "node-linux-"+arch, "bin", "node"), NPM: dir}
	if err := e.check(); err != nil {
		tb.Skipf("mcpnode: no npm cache for the MCP tests (%v); make mcp-npm installs it and make test sets CASKG_NODE22 and CASKG_MCP_NPM", err)
	}
	return e
}

// check tells what is missing of e.
func (e Env) check() error {
	if e.Node == "" || e.NPM == "" {
		return errors.New("both must be set")
	}
	if fi, err := os.Stat(e.Node); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable Node", e.Node)
	}
	for _, pkg := range []string{"sdk", "conformance", "server-everything", "server-filesystem"} {
		p := filepath.Join(e.NPM, "node_modules", "@modelcontextprotocol", pkg, "package.json")
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("@modelcontextprotocol/%s is not installed in %s", pkg, e.NPM)
		}
	}
	return nil
}

// moduleRoot is the nearest folder above the working directory with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// Server is the command line that starts a reference server installed in the cache:
// "server-everything" or "server-filesystem"; args follow it.
func (e Env) Server(name string, args ...string) []string {
	return append([]string{e.Node, filepath.Join(e.NPM, "node_modules", "@modelcontextprotocol", name, "dist", "index.js")}, args...)
}

// Target is the server a Client connects to: Command (with Args, Env added to the SDK's safe
// default environment, and Cwd) over stdio, or URL (with Headers) over streamable HTTP.
type Target struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Answers, when set, make the client declare sampling, elicitation and roots and answer
	// the server's requests for them with what it holds.
	Answers *Answers `json:"answers,omitempty"`
}

// Answers are what the client answers a server's requests with: a sampling request with
// Sampling followed by the request's first message text in parentheses, from the model
// Model; an elicitation with the action "accept" and Elicit as its content; roots/list with
// Roots (URIs).
type Answers struct {
	Sampling string         `json:"sampling"`
	Model    string         `json:"model"`
	Elicit   map[string]any `json:"elicit"`
	Roots    []string       `json:"roots"`
}

// Step is one thing the client does: Op "listTools", "callTool" (Name, Arguments, and
// optionally TimeoutMs, AbortAfterMs, Progress), "ping", "setLoggingLevel" (Level),
// "notifications" or "close".
type Step struct {
	Op           string `json:"op"`
	Name         string `json:"name,omitempty"`
	Arguments    any    `json:"arguments,omitempty"`
	TimeoutMs    int    `json:"timeoutMs,omitempty"`
	AbortAfterMs int    `json:"abortAfterMs,omitempty"`
	Progress     bool   `json:"progress,omitempty"`
	Level        string `json:"level,omitempty"`
}

// Answer is the driver's answer to a step: the SDK's result as JSON, or its error.
type Answer struct {
	Op       string            `json:"op"`
	OK       bool              `json:"ok"`
	Result   json.RawMessage   `json:"result,omitempty"`
	Error    string            `json:"error,omitempty"`
	Code     int               `json:"code,omitempty"`
	Progress []json.RawMessage `json:"progress,omitempty"`
}

// Tool is what Tools decodes of a tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Tools decodes a listTools answer.
func (a Answer) Tools() ([]Tool, error) {
	var r struct{ Tools []Tool }
	if !a.OK {
		return nil, fmt.Errorf("mcpnode: %s: %s", a.Op, a.Error)
	}
	err := json.Unmarshal(a.Result, &r)
	return r.Tools, err
}

// CallResult is what Call decodes of a callTool answer.
type CallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// Call decodes a callTool answer.
func (a Answer) Call() (CallResult, error) {
	var r CallResult
	if !a.OK {
		return r, fmt.Errorf("mcpnode: %s: %s", a.Op, a.Error)
	}
	err := json.Unmarshal(a.Result, &r)
	return r, err
}

// Client is a running driver: the TypeScript SDK's Client connected to a Target.
type Client struct {
	tb      testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   *bufio.Scanner
	stderr  *syncio.Buffer
	timeout time.Duration
	waited  bool
	// Connect is the answer to the connection: server info, capabilities, instructions and the
	// session id.
	Connect Answer
}

// Run runs steps against t in one go (the driver's batch mode, steps on its command line) and
// returns the answers, the connection's first; it fails tb when the driver fails or takes
// longer than timeout.
func (e Env) Run(tb testing.TB, t Target, timeout time.Duration, steps ...Step) []Answer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := e.client(ctx, tb, t, steps)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("mcpnode: the TypeScript client against %s: %v; its output:\n%s\nits stderr:\n%s", cmd.Args[2], err, out, stderr.String())
	}
	var answers []Answer
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var a Answer
		if err := json.Unmarshal(line, &a); err != nil {
			tb.Fatalf("mcpnode: bad answer %q: %v", line, err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(steps)+1 {
		tb.Fatalf("mcpnode: %d answers to %d steps and the connection; stderr:\n%s", len(answers), len(steps), stderr.String())
	}
	return answers
}

// client is the command that runs the driver with args, each as JSON: the target and, in batch
// mode, the steps.
func (e Env) client(ctx context.Context, tb testing.TB, args ...any) *exec.Cmd {
	tb.Helper()
	argv := []string{e.script(tb)}
	for _, v := range args {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		argv = append(argv, string(b))
	}
	cmd := exec.CommandContext(ctx, e.Node, argv...)
	cmd.Env = append(os.Environ(), "CASKG_MCP_NPM="+e.NPM)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// script writes the driver into a folder of tb's and returns its path.
func (e Env) script(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "mcpclient.mjs")
	if err := os.WriteFile(p, driver, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Start runs the driver against t and waits for the connection; it fails tb when the
// connection fails. Every step must be answered within timeout. Close (registered as
// cleanup too) ends it.
func (e Env) Start(tb testing.TB, t Target, timeout time.Duration) *Client {
	tb.Helper()
	c := &Client{tb: tb, stderr: syncio.NewBuffer(), timeout: timeout}
	c.cmd = e.client(context.Background(), tb, t)
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	c.lines = bufio.NewScanner(stdout)
	c.lines.Buffer(nil, 64<<20)
	if err := c.cmd.Start(); err != nil {
		tb.Fatalf("mcpnode: start %s: %v", e.Node, err)
	}
	tb.Cleanup(c.Close)
	c.Connect = c.read()
	if !c.Connect.OK {
		tb.Fatalf("mcpnode: connect to %s: %s; driver stderr:\n%s", c.cmd.Args[2], c.Connect.Error, c.stderr)
	}
	return c
}

// read waits at most c.timeout for the next answer; the driver is killed if it is late.
func (c *Client) read() Answer {
	c.tb.Helper()
	type line struct {
		b  []byte
		ok bool
	}
	got := make(chan line, 1)
	go func() {
		ok := c.lines.Scan()
		got <- line{bytes.Clone(c.lines.Bytes()), ok}
	}()
	var l line
	select {
	case l = <-got:
	case <-time.After(c.timeout):
		c.kill()
		<-got
		c.tb.Fatalf("mcpnode: no answer from the TypeScript client within %v; its stderr:\n%s", c.timeout, c.stderr)
	}
	if !l.ok {
		c.kill()
		c.tb.Fatalf("mcpnode: the TypeScript client ended (%v); its stderr:\n%s", c.lines.Err(), c.stderr)
	}
	var a Answer
	if err := json.Unmarshal(l.b, &a); err != nil {
		c.tb.Fatalf("mcpnode: bad answer %q: %v", l.b, err)
	}
	return a
}

// Do runs one step and returns its answer.
func (c *Client) Do(s Step) Answer {
	c.tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		c.tb.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.tb.Fatalf("mcpnode: write step: %v; its stderr:\n%s", err, c.stderr)
	}
	return c.read()
}

// Stderr is what the driver (and a stdio server it started) wrote to stderr so far.
func (c *Client) Stderr() string { return c.stderr.String() }

// Close closes the driver's stdin, which closes the session, and waits for it to exit, killing
// it after c.timeout.
func (c *Client) Close() {
	if c.waited {
		return
	}
	c.waited = true
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.tb.Errorf("mcpnode: the TypeScript client exited with %v; its stderr:\n%s", err, c.stderr)
		}
	case <-time.After(c.timeout):
		c.cmd.Process.Kill()
		<-done
		c.tb.Errorf("mcpnode: the TypeScript client did not exit within %v of its stdin closing; its stderr:\n%s", c.timeout, c.stderr)
	}
}

// kill ends the driver after a failure, already reported.
func (c *Client) kill() {
	if !c.waited {
		c.waited = true
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// Check is one check of the conformance suite.
type Check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, …
	ErrorMessage string `json:"errorMessage"`
}

// Conformance runs the MCP conformance suite's server scenario against url and returns its
// checks, and its printed output for messages. It fails tb when the suite cannot run or
// reports no check; a failing check is for the caller to judge.
func (e Env) Conformance(tb testing.TB, ctx context.Context, url, scenario string) ([]Check, string) {
	tb.Helper()
	dir := tb.TempDir()
	suite := filepath.Join(e.NPM, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	cmd := exec.CommandContext(ctx, e.Node, suite, "server", "--url", url, "--scenario", scenario, "-o", dir)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	var checks []Check
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var cs []Check
		if err := json.Unmarshal(b, &cs); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		checks = append(checks, cs...)
		return nil
	})
	if walkErr != nil || len(checks) == 0 {
		tb.Fatalf("mcpnode: conformance %s against %s: no checks (%v, %v); output:\n%s", scenario, url, err, walkErr, output)
	}
	if err != nil {
		// The suite exits 1 when a check fails; the checks say which.
		output = append(output, fmt.Sprintf("\n(exit: %v)", err)...)
	}
	return checks, strings.TrimSpace(string(output))
}
