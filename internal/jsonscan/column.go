package jsonscan

// Column reads an array of numbers and nulls into dst (reusing its space);
// a null column is nil.
func (s *Scanner) Column(dst []float64, maxLen int) ([]float64, error) {
	k := colSink{dst: dst[:0]}
	if k.dst == nil {
		k.dst = make([]float64, 0, 64)
	}
	null, err := s.readColumn(&k, maxLen)
	if null || err != nil {
		return nil, err
	}
	return k.dst, nil
}

// colSink is where a column's elements go: into dst, or, when tallying,
// into tally (held inline: a column read for its checks allocates
// nothing).
type colSink struct {
	dst      []float64
	tally    Tally
	tallying bool
}

func (k *colSink) len() int {
	if k.tallying {
		return k.tally.N
	}
	return len(k.dst)
}

func (k *colSink) put(x float64) {
	if k.tallying {
		k.tally.put(x)
	} else {
		k.dst = append(k.dst, x)
	}
}

// fast reads elements by the sink's fast loop and says where it stopped.
func (k *colSink) fast(s *Scanner, maxLen int) int {
	if k.tallying {
		return s.skimColumn(&k.tally, maxLen)
	}
	var state int
	k.dst, state = s.column(k.dst, maxLen)
	return state
}

// readColumn is the walk Column and TallyColumn share: null, or '[', the
// elements by the fast loop and, where it stops, by the general path,
// until the ']'.
func (s *Scanner) readColumn(k *colSink, maxLen int) (null bool, err error) {
	if s.Peek() == 'n' {
		return true, s.Literal("null")
	}
	if err := s.Expect('['); err != nil {
		return false, err
	}
	if s.Peek() == ']' {
		s.pos++
		return false, nil
	}
	for {
		state := k.fast(s, maxLen)
		if state == colDone {
			return false, nil
		}
		if state == atElement {
			x, err := s.Number()
			if err != nil {
				return false, err
			}
			if k.len() == maxLen {
				return false, s.Errorf("a series longer than %d samples", maxLen)
			}
			k.put(x)
		}
		if done, err := s.Next(']'); err != nil || done {
			return false, err
		}
	}
}
