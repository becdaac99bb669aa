package builder

import "slices"

// coUse is what the runs say of a pair of skills (s, j), kept in the row of s: how many runs
// used the two together (co), how many of those used s before j (ahead) and how many used j
// before s (behind). The row of j keeps the mirror: the same co, ahead and behind swapped.
type coUse struct {
	j                 int32
	co, ahead, behind int32
}

// coTable is the runs' co-use of every pair of skills: per skill, the pairs the runs used it
// in, in increasing order of the companion, so that a pair is found by a binary search in one
// short row. It replaces maps keyed by pairs, whose look-ups, scattered over megabytes, were a
// sixth of an update; a row is also what the tally of a build state lists, and is decoded
// without hashing a pair.
type coTable struct {
	rows [][]coUse // by skill; a row past the end is empty
}

// newCoTable returns an empty table for n skills (it grows past n when asked).
func newCoTable(n int) *coTable { return &coTable{rows: make([][]coUse, n)} }

// search returns where companion j is, or would be inserted, in row, and whether it is there.
func search(row []coUse, j int32) (int, bool) {
	lo, hi := 0, len(row)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if row[m].j < j {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(row) && row[lo].j == j
}

// get is the co-use of (i, j), zero when the runs never used the two together.
func (c *coTable) get(i, j int) coUse {
	if i < 0 || i >= len(c.rows) {
		return coUse{}
	}
	row := c.rows[i]
	if k, ok := search(row, int32(j)); ok {
		return row[k]
	}
	return coUse{}
}

// co is how many runs used i and j together.
func (c *coTable) co(i, j int) int { return int(c.get(i, j).co) }

// before is how many runs used i before j.
func (c *coTable) before(i, j int) int { return int(c.get(i, j).ahead) }

// entry returns the entry of (i, j) in row i, made (zero) when missing, and whether it was.
func (c *coTable) entry(i, j int) (*coUse, bool) {
	if i >= len(c.rows) {
		c.rows = append(c.rows, make([][]coUse, i+1-len(c.rows))...)
	}
	row := c.rows[i]
	k, ok := search(row, int32(j))
	if !ok {
		row = slices.Insert(row, k, coUse{j: int32(j)})
		c.rows[i] = row
	}
	return &row[k], !ok
}

// add adds co runs of a and b together, ab of them with a first and ba with b first, to both
// rows; it reports whether the runs had not used the two together before.
func (c *coTable) add(a, b, co, ab, ba int) bool {
	e, added := c.entry(a, b)
	e.co += int32(co)
	e.ahead += int32(ab)
	e.behind += int32(ba)
	m, _ := c.entry(b, a)
	m.co += int32(co)
	m.ahead += int32(ba)
	m.behind += int32(ab)
	return added
}

// pairs is the number of entries, two a pair.
func (c *coTable) pairs() int {
	n := 0
	for _, row := range c.rows {
		n += len(row)
	}
	return n
}

// clone returns a copy of the table that does not share its rows.
func (c *coTable) clone() *coTable {
	d := &coTable{rows: make([][]coUse, len(c.rows))}
	all := make([]coUse, 0, c.pairs())
	for i, row := range c.rows {
		from := len(all)
		all = append(all, row...)
		d.rows[i] = all[from:len(all):len(all)]
	}
	return d
}
