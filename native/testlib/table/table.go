// Package table runs table tests: each case a subtest named by the case, the function under
// test applied to the case's input and its result compared with the case's want by go-cmp (Run)
// or its error with the text the case wants in it (Errors). It imports nothing of this module,
// so that the tests of every package (graphs' among them) may use it.
package table

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Case is one row of a table test: its name, the input, and the result it wants. It is an
// alias of a struct type, not a named one, so that rows are written unkeyed as a table's rows
// are: go vet wants the fields of another package's named struct type keyed.
type Case[In, Out any] = struct {
	Name string
	In   In
	Want Out
}

// Run runs f on each case's input in a subtest named by the case and reports, naming the
// function fn, the input and the difference (-want +got), a result other than the case's want.
// opts are go-cmp's options for the comparison.
func Run[In, Out any](t *testing.T, fn string, f func(In) Out, cases []Case[In, Out], opts ...cmp.Option) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if msg := check(fn, f, c, opts...); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// check is Run's verdict on one case: "" when f(c.In) is c.Want, else what differs.
func check[In, Out any](fn string, f func(In) Out, c Case[In, Out], opts ...cmp.Option) string {
	if diff := cmp.Diff(c.Want, f(c.In), opts...); diff != "" {
		return fmt.Sprintf("%s(%#v) (-want +got):\n%s", fn, c.In, diff)
	}
	return ""
}

// Errors runs f on each case's input in a subtest named by the case and reports, naming the
// function fn and the input, an error without the case's want in its text, or no error where
// one is wanted. A case whose want is "" wants no error.
func Errors[In any](t *testing.T, fn string, f func(In) error, cases []Case[In, string]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if msg := checkError(fn, f, c); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// checkError is Errors' verdict on one case: "" when f(c.In) fails as c.Want says, else how not.
func checkError[In any](fn string, f func(In) error, c Case[In, string]) string {
	err := f(c.In)
	switch {
	case c.Want == "" && err != nil:
		return fmt.Sprintf("%s(%#v): %v, want no error", fn, c.In, err)
	case c.Want != "" && (err == nil || !strings.Contains(err.Error(), c.Want)):
		return fmt.Sprintf("%s(%#v): %v, want an error with %q", fn, c.In, err, c.Want)
	}
	return ""
}
