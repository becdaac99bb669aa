package learn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/caskg/caskg/native/internal/builder"
)

// maxLine bounds a trace line Record writes. caskg build reads lines of up to 16 MiB
// (lines.Each); a trace of a thousand calls is far below this.
const maxLine = 1 << 20

// readLimit is the longest line builder.ReadTraces reads.
const readLimit = 16 << 20

// traceLine is the JSON of one line of traces.jsonl: what builder.ReadTraces reads (id, skills,
// outcome) and what people and tools may want besides (task, calls), which it ignores.
type traceLine struct {
	ID      string   `json:"id"`
	Task    string   `json:"task"`
	Skills  []string `json:"skills"`
	Outcome string   `json:"outcome"`
	Source  string   `json:"source,omitempty"`
	Calls   []Call   `json:"calls"`
}

// encodeLine returns t's line, newline included.
func encodeLine(t Trace) ([]byte, error) {
	switch {
	case t.ID == "":
		return nil, errors.New("learn: trace: empty id")
	case len(t.Tools) == 0:
		return nil, fmt.Errorf("learn: trace %s: no tools", t.ID)
	}
	for i, name := range t.Tools {
		if name == "" {
			return nil, fmt.Errorf("learn: trace %s: tool %d: empty name", t.ID, i+1)
		}
	}
	ln := traceLine{ID: t.ID, Task: t.Task, Skills: t.Tools, Outcome: "success", Source: t.Source, Calls: t.Calls}
	if t.Failed {
		ln.Outcome = "failure"
	}
	if ln.Calls == nil {
		ln.Calls = []Call{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ln); err != nil { // Encode ends the line with "\n"
		return nil, fmt.Errorf("learn: trace %s: %w", t.ID, err)
	}
	if b.Len() > maxLine {
		return nil, fmt.Errorf("learn: trace %s: %d bytes, over the limit of %d", t.ID, b.Len(), maxLine)
	}
	return b.Bytes(), nil
}

// badLine is a line of traces.jsonl that is not a trace.
type badLine struct {
	line int
	err  error
}

// recovered is what recoverTraces makes of traces.jsonl.
type recovered struct {
	traces []builder.Trace
	bad    []badLine // skipped
	keep   int64     // bytes to keep: a torn last line is cut off
	torn   int       // the line number of the torn last line, 0 for none
	// newline: the last line is a whole trace without its newline, which is added so that the
	// next append starts a line of its own.
	newline bool
}

// recoverTraces reads the bytes of traces.jsonl. Lines are appended whole and fsynced, so
// only the last line can be torn, by a kill during its write: a last line without a newline
// that is not a trace is cut off. A bad line elsewhere was written by someone else; it is
// skipped and reported, never removed.
func recoverTraces(data []byte) recovered {
	var r recovered
	line := 0
	for start := 0; start < len(data); {
		line++
		end := bytes.IndexByte(data[start:], '\n')
		last := end < 0
		if last {
			end = len(data) - start
		}
		raw := data[start : start+end]
		seg := bytes.TrimSpace(raw)
		var t builder.Trace
		var err error
		switch {
		case len(seg) == 0:
		case len(raw) > readLimit:
			err = fmt.Errorf("longer than %d bytes", readLimit)
		default:
			t, err = builder.ParseTrace(seg)
		}
		switch {
		case last && len(seg) == 0:
			r.keep = int64(start) // trailing white space without a newline
			return r
		case last && err != nil:
			r.torn, r.keep = line, int64(start)
			return r
		case err != nil:
			r.bad = append(r.bad, badLine{line, err})
		case len(seg) > 0:
			r.traces = append(r.traces, t)
		}
		if last {
			r.newline, r.keep = true, int64(len(data))
			return r
		}
		start += end + 1
		r.keep = int64(start)
	}
	return r
}

// openTraces reads the rotated trace files (readRotated), then opens traces.jsonl for
// appending, creating it when missing, and reads what it holds (recoverTraces), repairing its
// end.
func (l *Loop) openTraces() error {
	if err := l.readRotated(); err != nil {
		return err
	}
	path := filepath.Join(l.dir, TracesFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("learn: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("learn: reading %s: %w", path, err)
	}
	r := recoverTraces(data)
	for _, b := range r.bad {
		l.opt.Logf("learn: %s:%d: skipped: %v (caskg build --traces refuses this file until the line is fixed)", path, b.line, b.err)
	}
	if r.keep < int64(len(data)) {
		if r.torn > 0 {
			l.opt.Logf("learn: %s:%d: cut off a torn last line of %d bytes (the gateway was killed while writing it)", path, r.torn, int64(len(data))-r.keep)
		}
		if err := f.Truncate(r.keep); err != nil {
			f.Close()
			return fmt.Errorf("learn: repairing %s: %w", path, err)
		}
	}
	if r.newline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return fmt.Errorf("learn: repairing %s: %w", path, err)
		}
		r.keep++
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("learn: %s: %w", path, err)
	}
	l.tf, l.tsize = f, r.keep
	for _, t := range r.traces {
		l.addTrace(t)
	}
	return nil
}

// addTrace appends t to the traces in memory; l.mu is held or the Loop not yet shared.
func (l *Loop) addTrace(t builder.Trace) {
	if _, ok := l.first[t.Key()]; !ok {
		l.first[t.Key()] = len(l.traces)
	}
	l.traces = append(l.traces, t)
}

// Record appends t to traces.jsonl and fsyncs before it returns, so a recorded trace survives a
// kill. After every LearnEvery new traces it starts an update in the background. A trace needs
// an id and at least one tool.
func (l *Loop) Record(t Trace) error {
	if l.opt.NoTaskText {
		t.Task = "" // never written, so never learned
	}
	line, err := encodeLine(t)
	if err != nil {
		return err
	}
	bt, err := builder.ParseTrace(bytes.TrimSpace(line))
	if err != nil {
		return fmt.Errorf("learn: trace %s: %w", t.ID, err) // encodeLine and parseTrace disagree: a bug
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.open(); err != nil {
		return err
	}
	_, err = l.tf.Write(line)
	if err == nil {
		err = l.tf.Sync()
	}
	if err != nil {
		l.tf.Truncate(l.tsize) // best effort: the next line must not continue a torn one
		return fmt.Errorf("learn: recording trace %s: %w", t.ID, err)
	}
	l.tsize += int64(len(line))
	if l.opt.RotateBytes > 0 && l.tsize >= l.opt.RotateBytes {
		if err := l.rotateLocked(); err != nil {
			l.opt.Logf("%v; appending to it until a rotation works", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addTrace(bt)
	if l.catHash != "" && len(l.traces)-l.scheduled >= l.opt.LearnEvery {
		l.request()
	} else if l.opt.LearnAfterQuiet > 0 {
		if l.quiet == nil {
			l.quiet = time.AfterFunc(l.opt.LearnAfterQuiet, l.LearnNow)
		} else {
			l.quiet.Reset(l.opt.LearnAfterQuiet)
		}
	}
	return nil
}

// LearnNow starts learning the traces recorded and not yet learned, however few, in the
// background (Wait waits for it): what a quiet spell of LearnAfterQuiet does by itself.
func (l *Loop) LearnNow() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && l.catHash != "" && len(l.traces) > l.scheduled {
		l.request()
	}
}
