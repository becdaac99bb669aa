// Package syncio has the writers that goroutines share: the gateway's status lines, written
// from the servers' stderr readers, the learning loop and the front, and the stderr of a
// child process that a test reads while the process runs.
package syncio

import (
	"bytes"
	"io"
	"sync"
)

// Writer serializes writes to the writer it wraps.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the wrapped writer while no other Write runs.
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Buffer is a bytes.Buffer that one goroutine may write while another reads it.
type Buffer struct {
	b bytes.Buffer
	w Writer
}

// NewBuffer returns an empty Buffer.
func NewBuffer() *Buffer {
	b := &Buffer{}
	b.w.w = &b.b
	return b
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) { return b.w.Write(p) }

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.b.String()
}
