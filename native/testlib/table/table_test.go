package table

import (
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	Run(t, "strings.ToUpper", strings.ToUpper, []Case[string, string]{
		{"empty", "", ""},
		{"word", "tea", "TEA"},
	})
}

// TestCheck holds Run's verdict to what a failing case must say: the function, the input and
// the difference; a passing case says nothing.
func TestCheck(t *testing.T) {
	if msg := check("strings.ToUpper", strings.ToUpper, Case[string, string]{"word", "tea", "TEA"}); msg != "" {
		t.Errorf("a passing case: %q, want none", msg)
	}
	msg := check("strings.ToUpper", strings.ToUpper, Case[string, string]{"word", "tea", "tea"})
	for _, want := range []string{`strings.ToUpper("tea") (-want +got):`, `-`, `"tea"`, `+`, `"TEA"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("a failing case: %q lacks %q", msg, want)
		}
	}
}

func parseBool(s string) error {
	if s != "true" && s != "false" {
		return errors.New("not a boolean: " + s)
	}
	return nil
}

// TestCheckError holds Errors' verdict to the three ways a case fails: no error where one is
// wanted, another error, an error where none is wanted.
func TestCheckError(t *testing.T) {
	for _, c := range []struct {
		c    Case[string, string]
		want string // in the verdict; "" for none
	}{
		{Case[string, string]{"wanted and given", "x", "not a boolean"}, ""},
		{Case[string, string]{"none wanted, none given", "true", ""}, ""},
		{Case[string, string]{"wanted, none given", "true", "not a boolean"}, `parseBool("true"): <nil>, want an error with "not a boolean"`},
		{Case[string, string]{"another error", "x", "too long"}, `parseBool("x"): not a boolean: x, want an error with "too long"`},
		{Case[string, string]{"given, none wanted", "x", ""}, `parseBool("x"): not a boolean: x, want no error`},
	} {
		if got := checkError("parseBool", parseBool, c.c); got != c.want {
			t.Errorf("%s: %q, want %q", c.c.Name, got, c.want)
		}
	}
}
