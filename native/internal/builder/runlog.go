package builder

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The runs of a build state, kept so that a later build can read them all (a full build after
// a change of library, `caskg inspect --learned`, the gateway's rebuilds) while an update reads
// none it does not need: one record per run, and an index of fixed-size entries (the record's
// offset and a hash of the run's Key) that an update checks its new runs against and appends to.
//
//	record: u len(id), id, u skills, per skill (u len, name), u flags (1 failed),
//	        u len(source), source, u len(task), task
//	index:  per run: u32 offset of its record, u64 keyHash(run)

const runIndexEntry = 12

// runLog is the runs of a state: their records and index, and the runs decoded when some
// caller had them at hand. The records are head then records: an update's log shares the
// earlier log's records as its head (read-only) and appends its new runs' after them, so that
// tens of megabytes of old runs are not copied once more before the state file is written.
type runLog struct {
	head    []byte // the first records, shared with the log this one extends; nil when read from a file
	records []byte
	index   []byte
	decoded []Trace // nil until Runs decodes them (or a build had them)
}

// size is the length of the records, head and rest.
func (l *runLog) size() int { return len(l.head) + len(l.records) }

// all returns the records as one slice (a copy when the log has a head).
func (l *runLog) all() []byte {
	if len(l.head) == 0 {
		return l.records
	}
	return append(append(make([]byte, 0, l.size()), l.head...), l.records...)
}

// extend returns a log that continues l: its records and index, which it shares and does not
// change, and its decoded runs.
func (l *runLog) extend() runLog {
	n := runLog{head: l.all(), index: slices.Clip(l.index)}
	if l.decoded != nil {
		n.decoded = slices.Clip(l.decoded)
	}
	return n
}

// span is the records from off to end (offsets into head and records as one).
func (l *runLog) span(off, end int) ([]byte, bool) {
	h := len(l.head)
	switch {
	case off > end || end > l.size():
		return nil, false
	case end <= h:
		return l.head[off:end], true
	case off >= h:
		return l.records[off-h : end-h], true
	}
	return nil, false // a record never spans the two
}

// keyHash is FNV-1a of what Key says of a run, without making the string: two runs of one Key
// have one hash, and two of one hash are compared field by field.
func keyHash(t *Trace) uint64 {
	h := uint64(14695981039346656037)
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff // a byte no UTF-8 text holds ends each field
		h *= 1099511628211
	}
	str(t.ID)
	str(t.Source)
	if t.Failed {
		str("!")
	}
	for _, s := range t.Skills {
		str(s)
	}
	return h
}

// sameKey reports whether two runs have one Key.
func sameKey(a, b *Trace) bool {
	if a.ID != b.ID || a.Failed != b.Failed || a.Source != b.Source || len(a.Skills) != len(b.Skills) {
		return false
	}
	for i := range a.Skills {
		if a.Skills[i] != b.Skills[i] {
			return false
		}
	}
	return true
}

// appendRuns appends runs to the log.
func (l *runLog) append(runs []Trace) error {
	for i := range runs {
		t := &runs[i]
		if int64(l.size()) > math.MaxUint32 {
			return errors.New("builder: build state: the runs are over 4 GB")
		}
		l.index = binary.LittleEndian.AppendUint32(l.index, uint32(l.size()))
		l.index = binary.LittleEndian.AppendUint64(l.index, keyHash(t))
		str := func(s string) {
			l.records = binary.AppendUvarint(l.records, uint64(len(s)))
			l.records = append(l.records, s...)
		}
		str(t.ID)
		l.records = binary.AppendUvarint(l.records, uint64(len(t.Skills)))
		for _, s := range t.Skills {
			str(s)
		}
		flags := uint64(0)
		if t.Failed {
			flags = 1
		}
		l.records = binary.AppendUvarint(l.records, flags)
		str(t.Source)
		str(t.Task)
	}
	return nil
}

// len is the number of runs.
func (l *runLog) len() int { return len(l.index) / runIndexEntry }

// hash is run i's keyHash.
func (l *runLog) hash(i int) uint64 {
	return binary.LittleEndian.Uint64(l.index[i*runIndexEntry+4:])
}

// run decodes run i.
func (l *runLog) run(i int) (Trace, error) {
	if l.decoded != nil {
		return l.decoded[i], nil
	}
	if i < 0 || i >= l.len() {
		return Trace{}, fmt.Errorf("builder: build state: run %d of %d", i, l.len())
	}
	off := int(binary.LittleEndian.Uint32(l.index[i*runIndexEntry:]))
	end := l.size()
	if i+1 < l.len() {
		end = int(binary.LittleEndian.Uint32(l.index[(i+1)*runIndexEntry:]))
	}
	rec, ok := l.span(off, end)
	if !ok {
		return Trace{}, fmt.Errorf("builder: build state: run %d: %w", i, errCache)
	}
	r := &reader{b: rec}
	str := func() string {
		n := r.count(1)
		if r.err != nil {
			return ""
		}
		s := string(r.b[:n])
		r.b = r.b[n:]
		return s
	}
	var t Trace
	t.ID = str()
	if k := r.count(1); r.err == nil {
		t.Skills = make([]string, k)
		for x := range t.Skills {
			t.Skills[x] = str()
		}
	}
	t.Failed = r.below(2) == 1
	t.Source = str()
	t.Task = str()
	if r.err == nil && len(r.b) != 0 {
		r.err = errCache
	}
	if r.err != nil {
		return Trace{}, fmt.Errorf("builder: build state: run %d: %w", i, r.err)
	}
	return t, nil
}

// runs decodes every run, once.
func (l *runLog) runs() ([]Trace, error) {
	if l.decoded != nil || l.len() == 0 {
		return l.decoded, nil
	}
	out := make([]Trace, l.len())
	for i := range out {
		t, err := l.run(i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	l.decoded = out
	return out, nil
}

// check validates the index: whole entries, offsets in order within the records.
func (l *runLog) check() error {
	if len(l.index)%runIndexEntry != 0 {
		return fmt.Errorf("builder: build state: run index: %w", errCache)
	}
	prev := uint32(0)
	for i := range l.len() {
		off := binary.LittleEndian.Uint32(l.index[i*runIndexEntry:])
		if off < prev || int(off) > l.size() || (i == 0 && off != 0) {
			return fmt.Errorf("builder: build state: run index: %w", errCache)
		}
		prev = off
	}
	return nil
}
