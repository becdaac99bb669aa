package jsontext

// Kind names the kind of a valid JSON value, with its article, for messages: "an object",
// "an array", "a string", "a boolean", "null", "a number"; "nothing" for blank input.
func Kind(v []byte) string {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t' || v[0] == '\r' || v[0] == '\n') {
		v = v[1:]
	}
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
