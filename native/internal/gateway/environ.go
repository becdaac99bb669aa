package gateway

import (
	"maps"
	"runtime"
	"slices"
	"strings"
)

// SafeEnv are the variables of the gateway's environment every stdio server gets, beside those
// its entry names ("env", "envFile"): what a program needs to find its executables, its home,
// its temporary folder and the user's locale and terminal, and nothing that is a credential.
// The MCP SDKs' stdio clients pass the same short list (TypeScript's
// getDefaultEnvironment, Python's get_default_environment), so a server that runs under
// Claude Desktop runs here; "inheritEnv": true passes everything, as the gateway did before,
// when every server got GITHUB_TOKEN and the AWS keys of whoever started it.
var SafeEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
	// Windows, whose variable names ignore case.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
	"USERNAME", "HOMEDRIVE", "HOMEPATH", "TEMP", "TMP", "PROGRAMFILES", "PROGRAMDATA", "PROCESSOR_ARCHITECTURE",
}

// serverEnv is the environment of a stdio server given the gateway's own (os.Environ's form):
// the safe list's variables, or all with inheritEnv, then the entry's own over them, in a
// fixed order. A safe variable whose value starts with "()" (an exported bash function) is
// left out, as the SDKs do.
func serverEnv(s *ServerConfig, environ []string) []string {
	fold := runtime.GOOS == "windows"
	safe := func(k string) bool {
		if fold {
			k = strings.ToUpper(k)
		}
		return slices.Contains(SafeEnv, k)
	}
	out := make([]string, 0, len(s.Env)+len(SafeEnv))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, own := s.Env[k]; own {
			continue
		}
		if s.InheritEnv || safe(k) && !strings.HasPrefix(v, "()") {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, k+"="+s.Env[k])
	}
	return out
}
