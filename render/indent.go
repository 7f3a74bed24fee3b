package render

import "io"

// indenter is an io.Writer that takes compact JSON (encoding/json's output)
// in pieces of any size and writes it to w indented by two spaces, byte
// for byte as json.Indent indents it, without holding the document: the
// output goes out in 64 KiB pieces. Close writes the last piece and the
// newline json.Encoder ends a value with.
type indenter struct {
	w     io.Writer
	out   []byte
	depth int
	// inString and escaped track a string across pieces; open is the
	// bracket just written whose newline waits on the next byte, since an
	// empty object or list stays "{}", "[]".
	inString, escaped bool
	open              bool
	err               error
}

func newIndenter(w io.Writer) *indenter {
	return &indenter{w: w, out: make([]byte, 0, 64<<10+256)}
}

func (d *indenter) newline() {
	d.out = append(d.out, '\n')
	for i := 0; i < d.depth; i++ {
		d.out = append(d.out, "  "...)
	}
}

// Write indents p; it fails only when w has failed.
func (d *indenter) Write(p []byte) (int, error) {
	for _, c := range p {
		if d.open {
			d.open = false
			if c == '}' || c == ']' {
				d.out = append(d.out, c)
				continue
			}
			d.depth++
			d.newline()
		}
		d.put(c)
		if len(d.out) >= 64<<10 {
			d.flush()
		}
	}
	return len(p), d.err
}

func (d *indenter) put(c byte) {
	switch {
	case d.inString:
		d.out = append(d.out, c)
		switch {
		case d.escaped:
			d.escaped = false
		case c == '\\':
			d.escaped = true
		case c == '"':
			d.inString = false
		}
	case c == '"':
		d.inString = true
		d.out = append(d.out, c)
	case c == '{' || c == '[':
		d.out = append(d.out, c)
		d.open = true
	case c == '}' || c == ']':
		d.depth--
		d.newline()
		d.out = append(d.out, c)
	case c == ',':
		d.out = append(d.out, c)
		d.newline()
	case c == ':':
		d.out = append(d.out, ": "...)
	default:
		d.out = append(d.out, c)
	}
}

func (d *indenter) flush() {
	if d.err == nil {
		_, d.err = d.w.Write(d.out)
	}
	d.out = d.out[:0]
}

// Close writes what is left and the closing newline.
func (d *indenter) Close() error {
	d.out = append(d.out, '\n') // as json.Encoder ends a value
	d.flush()
	return d.err
}
