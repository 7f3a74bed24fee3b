package render

import "io"

// writeIndented writes compact JSON (encoding/json's output) to w indented
// by two spaces, byte for byte as json.Indent indents it, without holding
// a second, indented copy of a report that can be tens of megabytes: the
// output goes out in 64 KiB pieces.
func writeIndented(w io.Writer, src []byte) error {
	out := make([]byte, 0, 64<<10+256)
	depth, inString := 0, false
	newline := func(d int) {
		out = append(out, '\n')
		for i := 0; i < d; i++ {
			out = append(out, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(src) {
				i++
				out = append(out, src[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '{' || c == '[':
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				i++
				out = append(out, src[i]) // an empty object or list stays "{}", "[]"
				break
			}
			depth++
			newline(depth)
		case c == '}' || c == ']':
			depth--
			newline(depth)
			out = append(out, c)
		case c == ',':
			out = append(out, c)
			newline(depth)
		case c == ':':
			out = append(out, ": "...)
		default:
			out = append(out, c)
		}
		if len(out) >= 64<<10 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
	out = append(out, '\n') // as json.Encoder ends a value
	_, err := w.Write(out)
	return err
}
