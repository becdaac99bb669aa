package ingest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name rules. Every name must be non-empty, free of control characters and at most
// maxNameLen characters; otherwise the entry is skipped. A tool name must also follow the MCP
// tool-name rule (1–128 of A–Z a–z 0–9 _ - .), or it is skipped. A SKILL.md name that breaks the
// Agent Skills convention (lowercase letters, digits and single inner hyphens, at most 64
// characters) is kept with a warning: real libraries are full of "FFmpeg Video Editing".
const (
	maxNameLen      = 128 // characters, for any name
	maxSkillNameLen = 64  // the Agent Skills convention
)

// checkName returns why name is unusable (skip), or else why it breaks its kind's convention
// (warn); both are "" for a good name.
func checkName(name, kind string) (skip, warn string) {
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("name %s contains a control character (%U); skipped", quoteName(name), r), ""
		}
	}
	if n := utf8.RuneCountInString(name); n > maxNameLen {
		return fmt.Sprintf("name %s is %d characters long, more than %d; skipped", quoteName(name), n, maxNameLen), ""
	}
	if kind == KindTool {
		if !isMCPToolName(name) {
			return fmt.Sprintf("name %q breaks the MCP tool-name rule (1-128 characters of A-Z a-z 0-9 _ - .); skipped", name), ""
		}
		return "", ""
	}
	if !isAgentSkillName(name) {
		return "", fmt.Sprintf("name %q breaks the Agent Skills convention (lowercase letters, digits and single hyphens inside, at most %d characters); kept", name, maxSkillNameLen)
	}
	return "", ""
}

// quoteName quotes a name for a message, cut to its first 40 characters.
func quoteName(name string) string {
	if utf8.RuneCountInString(name) <= 40 {
		return fmt.Sprintf("%q", name)
	}
	i := 0
	for n := 0; n < 40; n++ {
		_, size := utf8.DecodeRuneInString(name[i:])
		i += size
	}
	return fmt.Sprintf("%q…", name[:i])
}

func isMCPToolName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func isAgentSkillName(name string) bool {
	if name == "" || len(name) > maxSkillNameLen || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
