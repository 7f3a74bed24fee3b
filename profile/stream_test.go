package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/jsonscan"
)

// readViaStream collects a whole profile through Stream.Walk.
func readViaStream(data []byte) (*Profile, error) {
	return Read(bytes.NewReader(data)) // Read is the stream, collected
}

// sameProfile compares two profiles, NaN equal to NaN.
func sameProfile(t testing.TB, a, b *Profile) {
	t.Helper()
	var ea, eb bytes.Buffer
	if err := Encode(&ea, a); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&eb, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea.Bytes(), eb.Bytes()) {
		t.Fatalf("stream and encoding/json disagree:\n%.300s\n%.300s", ea.String(), eb.String())
	}
}

func TestStreamMatchesRead(t *testing.T) {
	docs := map[string][]byte{
		"sim":     readTestdata(t, "sim-3nodes.json"),
		"minimal": []byte(minimalProfile),
		// Header after the nodes, name after the GPUs, unknown fields, escapes.
		"reordered": []byte(`{"nodes":[{"gpus":[{"series":{"t":[0,1],"power_w":[1.5,null],"x":[1]},"uuid":"GPU-\u0041","index":3,"extra":{"a":[1,{"b":null}]}}],"name":"n\"1","labels":{"k":"v"}}],
"interval_s":0.5,"ended_at":"2026-01-05T09:00:01Z","started_at":"2026-01-05T09:00:00Z","schema_version":"seedance.profile/v1.2","complete":true,"more":[true,false]}`),
		"empty nodes": []byte(`{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:00:00Z","interval_s":1,"nodes":[]}`),
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := Read(bytes.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readViaStream(doc)
			if err != nil {
				t.Fatal(err)
			}
			sameProfile(t, got, want)
		})
	}
}

func TestStreamRejects(t *testing.T) {
	base := minimalProfile
	for name, tt := range map[string]struct{ doc, want string }{
		"truncated":      {base[:len(base)-40], "truncated JSON"},
		"trailing":       {base + "x", "after top-level value"},
		"bad number":     {strings.Replace(base, `[5,null,7]`, `[5,01,7]`, 1), "invalid number"},
		"plus number":    {strings.Replace(base, `[5,null,7]`, `[5,+1,7]`, 1), "invalid character '+'"},
		"length":         {strings.Replace(base, `[5,null,7]`, `[5,7]`, 1), "has 2 values but series.t has 3"},
		"wrong version":  {strings.Replace(base, "profile/v1", "profile/v3", 1), "major version 3"},
		"fractional idx": {strings.Replace(base, `"index":0`, `"index":0.5`, 1), "not a GPU index"},
		"string in col":  {strings.Replace(base, `[5,null,7]`, `[5,"7",7]`, 1), "invalid character '\"'"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readViaStream([]byte(tt.doc))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzStreamAgreesWithRead: the fast scanner and encoding/json accept the
// same documents and read the same data from them.
// FuzzStreamAgreesWithRead checks the stream against encoding/json as an
// oracle: what the stream accepts, encoding/json reads with the same values;
// what encoding/json accepts, the stream accepts too unless it breaks one
// of the stream's stricter rules (a key twice in an object, a limit).
func FuzzStreamAgreesWithRead(f *testing.F) {
	f.Add([]byte(minimalProfile))
	f.Add([]byte(metaProfile))
	for _, v := range metaVariants {
		f.Add([]byte(strings.Replace(metaProfile, v.old, v.new, 1)))
	}
	f.Add([]byte(`{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:00:00Z","interval_s":1,"nodes":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return // gzip: the oracle reads JSON only
		}
		want, errA := readEncodingJSON(bytes.NewReader(data))
		got, errB := readViaStream(data)
		if errB == nil && errA != nil {
			t.Fatalf("the stream accepted what encoding/json refuses: %v", errA)
		}
		if errA == nil && errB != nil && !stricter(errB) {
			t.Fatalf("encoding/json accepted, the stream refused: %v", errB)
		}
		if errA == nil && errB == nil && !reflect.DeepEqual(want.Nodes == nil, false) {
			sameProfile(t, got, want)
		}
		if r, errC := Read(bytes.NewReader(data)); (errC == nil) != (errB == nil) || (errC == nil && len(r.Nodes) != len(got.Nodes)) {
			t.Fatalf("Read and the stream disagree: %v / %v", errC, errB)
		}
		if errD := walkDropped(data); (errD == nil) != (errB == nil) {
			t.Fatalf("a stream that drops the topology's detail disagrees: %v / %v", errD, errB)
		}
		checkConvertOnly(t, string(data))
	})
}

// stricter reports whether err is one of the rules the stream has and
// encoding/json has not.
func stricter(err error) bool {
	msg := err.Error()
	for _, s := range []string{"appears twice", "nesting deeper", "longer than", "more than", "above", "outside", "spans"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// readEncodingJSON is the oracle: encoding/json and Validate.
func readEncodingJSON(r io.Reader) (*Profile, error) {
	var p Profile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, jsonscan.DescribeError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the top-level value", ErrInvalid)
	}
	if err := Validate(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// readTestdata reads a file of testdata/: sim-3nodes.json is what
// "seedance profile --source sim --sim-nodes 3 --sim-seed 3 --duration 90s"
// writes (the format package cannot run the simulator, which imports it).
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStreamOfMatchesOpenStream: a profile in memory streams the items its
// encoding would, and one that breaks the format's rules is refused alike.
func TestStreamOfMatchesOpenStream(t *testing.T) {
	p, err := Read(bytes.NewReader(readTestdata(t, "sim-3nodes.json")))
	if err != nil {
		t.Fatal(err)
	}
	collect := func(s *Stream) *Profile {
		out, err := s.collect()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	encoded, err := OpenStream(&b, "encoded")
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := StreamOf(p, "in memory")
	if err != nil {
		t.Fatal(err)
	}
	if inMemory.Header.StartedAt != encoded.Header.StartedAt || inMemory.Header.SchemaVersion != encoded.Header.SchemaVersion {
		t.Fatalf("headers: %+v, %+v", inMemory.Header, encoded.Header)
	}
	sameProfile(t, collect(inMemory), collect(encoded))
	p.Nodes[0].GPUs[0].Index = -1
	if _, err := StreamOf(p, "broken"); err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "read profile broken") {
		t.Fatalf("a broken profile in memory: %v", err)
	}
}

// walkDropped walks data as the analysis does, the topology's detail
// dropped.
func walkDropped(data []byte) error {
	s, err := OpenStream(bytes.NewReader(data), "dropped")
	if err != nil {
		return err
	}
	s.DropTopologyDetail()
	return s.Walk(func(Item) error { return nil })
}
