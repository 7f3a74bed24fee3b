package profile

import (
	"errors"
	"fmt"

	"github.com/seedance/seedance/internal/jsonscan"
)

func (s *Stream) readHeader() error {
	if s.sc.Peek() == 0 {
		if s.sc.ReadErr() != nil { // the input failed before any JSON (a gzip bomb)
			return s.wrap(s.sc.ReadErr())
		}
		return s.wrap(errors.New("empty input"))
	}
	p := &Profile{}
	err := members(s.sc, func(key string) error {
		if key != "nodes" {
			return s.headerField(p, key)
		}
		if p.SchemaVersion == "" || p.StartedAt.IsZero() || p.EndedAt.IsZero() || p.IntervalS == 0 {
			// The header comes after the nodes: keep them.
			return s.sc.Array(func(i int) error {
				n, err := s.nodeFull(i)
				s.buffered = append(s.buffered, n)
				return err
			})
		}
		s.setHeader(p)
		h := *p
		if err := Validate(&h); err != nil {
			return err
		}
		if s.sc.Peek() == 'n' {
			return s.sc.Literal("null")
		}
		if err := s.sc.Expect('['); err != nil {
			return err
		}
		s.atNodes = true
		return errStop
	})
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil {
		return s.wrap(err)
	}
	if err := s.sc.End(); err != nil {
		return s.wrap(err)
	}
	s.setHeader(p)
	p.Nodes = s.buffered
	if err := Validate(p); err != nil {
		return s.wrap(err)
	}
	return nil
}

// errStop ends the header's object walk at "nodes": [.
var errStop = errors.New("stop")

// setHeader keeps p's top-level fields as the stream's Header.
func (s *Stream) setHeader(p *Profile) {
	s.Header = Header{p.SchemaVersion, p.Generator, p.Source, p.StartedAt, p.EndedAt, p.IntervalS, p.Complete, p.Notes, p.PendingUnknown, p.Unscheduled, p.Cluster, p.ContextS, p.Queues}
}

// headerField reads the value of one top-level key into p; an unknown
// key's value is skipped, as encoding/json ignores it.
func (s *Stream) headerField(p *Profile, key string) error {
	var dst any
	switch key {
	case "schema_version":
		dst = &p.SchemaVersion
	case "generator":
		dst = &p.Generator
	case "source":
		dst = &p.Source
	case "cluster":
		dst = &p.Cluster
	case "context_s":
		dst = &p.ContextS
	case "started_at":
		dst = &p.StartedAt
	case "ended_at":
		dst = &p.EndedAt
	case "interval_s":
		dst = &p.IntervalS
	case "complete":
		dst = &p.Complete
	case "notes":
		dst = &p.Notes
	case "pending_unknown":
		dst = &p.PendingUnknown
	case "unscheduled":
		dst = &p.Unscheduled
	case "queues":
		return s.meta("queues", s.metaReader().queues(&p.Queues))
	default:
		return s.sc.Skip() // unknown fields are ignored
	}
	return s.decodeField(key, dst)
}

// decodeField decodes the value of key into dst, naming the key in an
// error: "uuid: expected a string, found a number".
func (s *Stream) decodeField(key string, dst any) error {
	// The common cases without encoding/json: a string, a number.
	switch d, c := dst, s.sc.Peek(); d := d.(type) {
	case *string:
		if c == '"' {
			v, err := s.sc.Str()
			*d = v
			return err
		}
	case *float64:
		if c == '-' || c >= '0' && c <= '9' {
			v, err := s.sc.Number()
			*d = v
			return err
		}
	}
	if err := s.sc.Decode(dst); err != nil {
		var se *jsonscan.SyntaxError
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("%s: %v", key, err)
	}
	return nil
}
