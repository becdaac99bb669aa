package engine

import "unicode/utf8"

// editDistance is the Levenshtein distance of a and b counted in runes (Unicode code points),
// when it is at most bound; otherwise some value above bound. Stopping as soon as a row of the
// table exceeds the bound is what makes typo correction cheap: most lexicon terms are far from a
// query word and are given up after a character or two.
func editDistance(a, b string, bound int) int {
	if a == b {
		return 0
	}
	var abuf, bbuf [64]rune
	ra, rb := runes(a, abuf[:0]), runes(b, bbuf[:0])
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	if len(rb)-len(ra) > bound {
		return bound + 1
	}
	// Common prefix and suffix change nothing.
	for len(ra) > 0 && ra[0] == rb[0] {
		ra, rb = ra[1:], rb[1:]
	}
	for len(ra) > 0 && ra[len(ra)-1] == rb[len(rb)-1] {
		ra, rb = ra[:len(ra)-1], rb[:len(rb)-1]
	}
	if len(ra) == 0 {
		return len(rb)
	}
	var rowbuf [65]int
	row := rowbuf[:0]
	if len(ra)+1 > len(rowbuf) {
		row = make([]int, len(ra)+1)
	} else {
		row = rowbuf[:len(ra)+1]
	}
	for j := range row {
		row[j] = j
	}
	for i, c := range rb {
		prev := row[0] // the diagonal: distance of rb[:i] and ra[:j-1]
		row[0] = i + 1
		least := row[0]
		for j, d := range ra {
			cur := prev
			if c != d {
				cur = min(prev, row[j], row[j+1]) + 1
			}
			prev = row[j+1]
			row[j+1] = cur
			least = min(least, cur)
		}
		if least > bound {
			return bound + 1
		}
	}
	return row[len(ra)]
}

// runes appends the runes of s to buf; ASCII bytes without decoding.
func runes(s string, buf []rune) []rune {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			buf = append(buf, rune(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		buf = append(buf, r)
		i += size
	}
	return buf
}
