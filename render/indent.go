package render

import (
	"bufio"
	"io"
)

// writeIndented writes compact JSON (encoding/json's output) to w indented
// by two spaces, byte for byte as json.Indent indents it, without holding
// a second, indented copy of a report that can be tens of megabytes.
func writeIndented(w io.Writer, src []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	depth := 0
	newline := func(d int) {
		bw.WriteByte('\n')
		for i := 0; i < d; i++ {
			bw.WriteString("  ")
		}
	}
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			bw.WriteByte(c)
			if c == '\\' && i+1 < len(src) {
				i++
				bw.WriteByte(src[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			bw.WriteByte(c)
		case '{', '[':
			bw.WriteByte(c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				i++
				bw.WriteByte(src[i]) // an empty object or list stays "{}", "[]"
				continue
			}
			depth++
			newline(depth)
		case '}', ']':
			depth--
			newline(depth)
			bw.WriteByte(c)
		case ',':
			bw.WriteByte(c)
			newline(depth)
		case ':':
			bw.WriteString(": ")
		default:
			bw.WriteByte(c)
		}
	}
	bw.WriteByte('\n') // as json.Encoder ends a value
	return bw.Flush()
}
