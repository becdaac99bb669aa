package api

import (
	"strconv"
	"strings"
)

// parseQuery and unescape read a query string and a path segment as net/url's ParseQuery and
// PathUnescape do, with the same errors: net/url brings fmt, net/netip and unique, 34 KB of
// the edge worker's gzip bundle. The tests hold them to net/url on fixed and fuzzed inputs.

// maxParams is net/url's default limit on a query's parameters.
const maxParams = 10000

// parseQuery splits raw into its parameters, each key's values in order. On a bad pair it goes
// on, as url.ParseQuery does, and returns the first bad escape or the last ';'.
func parseQuery(raw string) (map[string][]string, error) {
	vals := map[string][]string{}
	if strings.Count(raw, "&") >= maxParams {
		return vals, &queryError{"number of URL query parameters exceeded limit"}
	}
	var first error
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			first = &queryError{"invalid semicolon separator in query"}
			continue
		}
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err := unescape(key, true)
		if err == nil {
			value, err = unescape(value, true)
		}
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		vals[key] = append(vals[key], value)
	}
	return vals, first
}

// unescape decodes %XX escapes of s, and in a query (query) '+' as a space.
func unescape(s string, query bool) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				bad := s[i:]
				if len(bad) > 3 {
					bad = bad[:3]
				}
				return "", &queryError{"invalid URL escape " + strconv.Quote(bad)}
			}
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+' && query:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// queryError is a bad query string or path segment, in net/url's words.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
