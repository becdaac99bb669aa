package wire

import (
	"math"
	"strconv"

	"github.com/caskg/caskg/graphs/jsontext"
)

// The tape is the response as a sequence of tokens that carry numbers as their bits and strings
// as their bytes, in the order of the JSON: a JavaScript host reads it instead of the text
// (AppendResponseTape) and builds the value JSON.parse would give, without anyone formatting or
// parsing a float; those were a fifth of a short query's time in Node. Tokens, integers
// little-endian:
//
//	{ } [ ]          an object or array opens or closes
//	k id len name    an object member's key: id (one byte) tells the keys apart, name (len bytes)
//	                 is its JSON name, which needs no escape
//	d f64            a float64, neither NaN nor infinite (those are encoding/json's error)
//	i i64            a signed integer
//	s len bytes      a string (len four bytes); encoding/json writes U+FFFD for each byte of it
//	                 that is not valid UTF-8, as utf8.DecodeRune reads it
//	x len bytes      JSON text: a float32, as encoding/json writes it
//	t f n            true, false, null

// encoder writes the response as the JSON text, or with tape set as the tape: the generated code
// calls one method a value, which writes the value's member key (its key token, given whole; ""
// for an array element) and then the value. The first error (a float encoding/json refuses)
// sticks, and the caller reads it at the end. The methods are not inlined: the generated code
// calls them at every field, and inlined they grew the WebAssembly module by kilobytes.
type encoder struct {
	b     []byte
	start int // where the JSON starts in b
	tape  bool
	err   error
}

// key writes the key token, or in JSON the comma before a member or an array element but the
// first, and a member's name.
//
//go:noinline
func (e *encoder) key(key string) {
	if e.tape {
		e.b = append(e.b, key...)
		return
	}
	if n := len(e.b); n > e.start && e.b[n-1] != '{' && e.b[n-1] != '[' {
		e.b = append(e.b, ',')
	}
	if key != "" {
		e.b = append(append(append(e.b, '"'), key[3:]...), '"', ':')
	}
}

// tok writes key and a token that carries no value: { [ t f n, or without key } ].
//
//go:noinline
func (e *encoder) tok(key string, c byte) {
	if c != '}' && c != ']' {
		e.key(key)
	}
	if !e.tape {
		switch c {
		case 't':
			e.b = append(e.b, "true"...)
			return
		case 'f':
			e.b = append(e.b, "false"...)
			return
		case 'n':
			e.b = append(e.b, "null"...)
			return
		}
	}
	e.b = append(e.b, c)
}

// float writes f as a float of bits bits: on the tape a float64 as a d token, a float32 as its
// JSON text, its shortest form as a float32, which a reader parses as it would parse the JSON.
//
//go:noinline
func (e *encoder) float(key string, f float64, bits int) {
	e.key(key)
	var err error
	switch {
	case !e.tape:
		e.b, err = jsontext.AppendFloat(e.b, f, bits)
	case math.IsInf(f, 0) || math.IsNaN(f):
		_, err = jsontext.AppendFloat(nil, f, bits)
	case bits == 32:
		var text []byte
		text, err = jsontext.AppendFloat(nil, f, 32)
		e.bytes('x', string(text))
	default:
		e.word('d', math.Float64bits(f))
	}
	if e.err == nil {
		e.err = err
	}
}

//go:noinline
func (e *encoder) int(key string, x int64) {
	e.key(key)
	if e.tape {
		e.word('i', uint64(x))
	} else {
		e.b = strconv.AppendInt(e.b, x, 10)
	}
}

func (e *encoder) word(c byte, u uint64) {
	e.b = append(e.b, c, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
}

// str writes s: on the tape its bytes as they are, valid UTF-8 or not, as a reader of the JSON
// would see it (encoding/json writes U+FFFD for each invalid byte, a reader of the tape decodes
// it so).
//
//go:noinline
func (e *encoder) str(key, s string) {
	e.key(key)
	if e.tape {
		e.bytes('s', s)
	} else {
		e.b = jsontext.AppendString(e.b, s)
	}
}

func (e *encoder) bytes(c byte, s string) {
	n := len(s)
	e.b = append(append(e.b, c, byte(n), byte(n>>8), byte(n>>16), byte(n>>24)), s...)
}
