package profile

import (
	"bytes"
	"io"
	"testing"
)

// TestSpill: a profile spilled node by node and read back with its header
// is the document Encode writes, byte for byte.
func TestSpill(t *testing.T) {
	p, err := Read(bytes.NewReader([]byte(minimalProfile)))
	if err != nil {
		t.Fatal(err)
	}
	p.Nodes = append(p.Nodes, p.Nodes[0])
	p.Nodes[1].Name = "n2"
	var want bytes.Buffer
	if err := Encode(&want, p); err != nil {
		t.Fatal(err)
	}
	s, err := NewSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range p.Nodes {
		if err := s.Node(&p.Nodes[i]); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Reader(p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("spilled:\n%s\nencoded:\n%s", got, want.Bytes())
	}
}
