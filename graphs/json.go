package graphs

// validJSON reports whether data is one well-formed JSON value, surrounded by nothing but
// whitespace: what encoding/json.Valid reports, without linking encoding/json into the
// WebAssembly module. Like encoding/json it nests at most maxJSONDepth arrays and objects, and it
// lets strings hold any bytes but control characters (invalid UTF-8 included).
func validJSON(data []byte) bool {
	p := jsonScanner{data: data}
	p.space()
	if !p.value(0) {
		return false
	}
	p.space()
	return p.i == len(data)
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonScanner struct {
	data []byte
	i    int
}

func (p *jsonScanner) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value steps over one value; depth counts the arrays and objects it is inside.
func (p *jsonScanner) value(depth int) bool {
	if p.i >= len(p.data) {
		return false
	}
	switch c := p.data[p.i]; c {
	case '{', '[':
		if depth >= maxJSONDepth {
			return false
		}
		return p.container(c, depth+1)
	case '"':
		return p.str()
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	default:
		return p.number()
	}
}

// container steps over an object or an array whose opening bracket is at p.i.
func (p *jsonScanner) container(open byte, depth int) bool {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	p.i++
	p.space()
	if p.i < len(p.data) && p.data[p.i] == end {
		p.i++
		return true
	}
	for {
		if open == '{' {
			if p.i >= len(p.data) || p.data[p.i] != '"' || !p.str() {
				return false
			}
			p.space()
			if p.i >= len(p.data) || p.data[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
		}
		if !p.value(depth) {
			return false
		}
		p.space()
		if p.i >= len(p.data) {
			return false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case end:
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *jsonScanner) literal(lit string) bool {
	if len(p.data)-p.i < len(lit) || string(p.data[p.i:p.i+len(lit)]) != lit {
		return false
	}
	p.i += len(lit)
	return true
}

// str steps over a string whose opening quote is at p.i.
func (p *jsonScanner) str() bool {
	for p.i++; p.i < len(p.data); p.i++ {
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			p.i++
			if p.i >= len(p.data) {
				return false
			}
			switch p.data[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(p.data)-p.i <= 4 {
					return false
				}
				for _, h := range p.data[p.i+1 : p.i+5] {
					if !isHex(h) {
						return false
					}
				}
				p.i += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number steps over -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *jsonScanner) number() bool {
	if p.i < len(p.data) && p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.data) && p.data[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return false
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

// digits steps over a run of decimal digits and says how long it was.
func (p *jsonScanner) digits() int {
	start := p.i
	for p.i < len(p.data) && '0' <= p.data[p.i] && p.data[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
