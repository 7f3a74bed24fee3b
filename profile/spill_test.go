package profile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// TestSpillLeftoversRemoved (#27, case 8): the spill of a run that was
// killed (its process is gone) is removed by the next run that spills in
// the same directory; that of a running process stays.
func TestSpillLeftoversRemoved(t *testing.T) {
	dir := t.TempDir()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	dead := filepath.Join(dir, fmt.Sprintf(".seedance-spill-%d-123.json", c.Process.Pid))
	alive := filepath.Join(dir, ".seedance-spill-1-456.json") // init never exits
	for _, f := range []string{dead, alive} {
		if err := os.WriteFile(f, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := NewSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if _, err := os.Stat(dead); err == nil {
		t.Error("the dead run's spill stayed")
	}
	if _, err := os.Stat(alive); err != nil {
		t.Error("a running process's spill was removed")
	}
}

// TestSpillReadTwice: a spill read once (written to a file) reads again
// (then analyzed), the same bytes; its file is compressed.
func TestSpillReadTwice(t *testing.T) {
	p, err := Read(bytes.NewReader([]byte(minimalProfile)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 50; i++ {
		n := p.Nodes[0]
		n.Name = fmt.Sprintf("n%d", i)
		if err := s.Node(&n); err != nil {
			t.Fatal(err)
		}
	}
	var reads [2][]byte
	for i := range reads {
		r, err := s.Reader(p)
		if err != nil {
			t.Fatal(err)
		}
		if reads[i], err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(reads[0], reads[1]) || !bytes.Contains(reads[1], []byte(`"name":"n49"`)) {
		t.Fatalf("the second read differs:\n%.200s\n%.200s", reads[0], reads[1])
	}
	st, _ := s.f.Stat()
	if st.Size()*3 > int64(len(reads[0])) {
		t.Errorf("spill file %d bytes for %d bytes of nodes: not compressed", st.Size(), len(reads[0]))
	}
}
