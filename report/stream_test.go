package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/recommend"
)

// full is a report with every section the JSON document has, strings that
// json.Marshal escapes among them.
func full(t *testing.T) *Result {
	r := analyzed(t, append(fill(2, 120), fill(90, 30)...))
	from, sharing := "n1", "mig:1g.10gb"
	r.Migration = &recommend.Plan{SchemaVersion: "1", Moves: []recommend.Move{
		{Workload: "team-<a>/train&x", From: &from, To: "n2", GPUs: []int{0, 1}, Reason: "frees \"n1\"", SavingsUSDPerHour: 3.5},
		{Workload: "pending\u2028", To: "n3", Sharing: &sharing},
	}, ReleasedNodes: []string{"n1"}, Blockers: []recommend.Blocker{{Workload: "w", Node: "n4", Reason: "no controller"}},
		NodePriceUSDPerHour: map[string]float64{"n1": 9}}
	r.Fragmentation = &recommend.Fragmentation{ThresholdRatio: 0.5, Pools: []recommend.FragPool{{Model: "H100", Nodes: 2, GPUs: 16}}}
	r.RuleMatches = map[string]int{"b": 2, "a": 0}
	r.Delta = map[string]float64{"idle_gpu_hours": -1.25}
	r.Warnings = append(r.Warnings, "a <warning>")
	if err := eval(r, "summary.idle_gpu_hours < 100", "summary.avg_gpu_util_pct > 0"); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWriteJSONIsMarshal: the streamed report is byte for byte what
// json.Marshal writes of its document, for a full report, for one without
// the later stages' sections, and for one whose lists are nil or empty.
func TestWriteJSONIsMarshal(t *testing.T) {
	empty := full(t)
	empty.Nodes, empty.Suggestions, empty.Inputs = nil, []analyze.Suggestion{}, nil
	empty.Migration.Moves, empty.Migration.ReleasedNodes = nil, []string{}
	for name, r := range map[string]*Result{"full": full(t), "analysis only": analyzed(t, fill(2, 90)), "empty lists": empty} {
		want, err := json.Marshal(r.document())
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := r.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: streamed\n%s\nwant\n%s", name, got.Bytes(), want)
		}
		if b, err := json.Marshal(r); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: json.Marshal of the Result differs from its document (%v)", name, err)
		}
	}
}

type (
	ptrText      struct{ V int }
	embedded     struct{ E int }
	withEmbedded struct {
		embedded
		A int `json:"a"`
	}
	withString struct {
		S int `json:"s,string"`
	}
	odd struct {
		Embedded withEmbedded   `json:"embedded"`
		String   withString     `json:"string"`
		Dash     int            `json:"-"`
		hidden   int            //nolint:unused // encoding/json leaves it out
		Bytes    []byte         `json:"bytes"`
		M        map[string]int `json:"m,omitempty"`
	}
	plain struct {
		Name    string     `json:"name"`
		Zero    float64    `json:"zero,omitempty"`
		NilPtr  *ptrText   `json:"nil_ptr"`
		Texts   []ptrText  `json:"texts"`
		Odd     odd        `json:"odd"`
		OddList []odd      `json:"odd_list,omitempty"`
		Untyped any        `json:"untyped"`
		Inner   *plainLeaf `json:"inner,omitempty"`
		NoTag   int
	}
	plainLeaf struct {
		L []float64 `json:"l"`
	}
)

// MarshalText has a pointer receiver: encoding/json calls it on list
// elements, which are addressable, and not on a copy.
func (p *ptrText) MarshalText() ([]byte, error) { return []byte("t" + strings.Repeat("x", p.V)), nil }

// TestStreamWritesWhatMarshalWrites: what streamer walks itself (structs,
// lists) and what it hands to json.Marshal (embedded fields, options,
// methods with pointer receivers, []byte) come out as json.Marshal writes
// them.
func TestStreamWritesWhatMarshalWrites(t *testing.T) {
	vals := []any{
		plain{Name: "<&>", Texts: []ptrText{{1}, {2}}, Odd: odd{Embedded: withEmbedded{embedded{3}, 5}, String: withString{4}, Bytes: []byte("hi"), M: map[string]int{"k": 1}},
			OddList: []odd{{}}, Untyped: []int{1}, Inner: &plainLeaf{L: []float64{1.5, 1e21}}, NoTag: 7},
		plain{},
		&plain{Texts: []ptrText{}},
		[]plain{{Name: "a"}, {}},
	}
	for _, v := range vals {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := stream(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("streamed\n%s\nwant\n%s", got.Bytes(), want)
		}
	}
}

// TestStreamStopsAtTheFirstError: a value json.Marshal refuses (NaN) and
// a writer that fails both end the stream with that error.
func TestStreamStopsAtTheFirstError(t *testing.T) {
	var b bytes.Buffer
	err := stream(&b, plainLeaf{L: []float64{1, math.NaN()}})
	var unsupported *json.UnsupportedValueError
	if !errors.As(err, &unsupported) {
		t.Errorf("NaN: %v, want json's UnsupportedValueError", err)
	}
	failed := errors.New("disk full")
	if err := stream(failingWriter{failed}, plain{}); !errors.Is(err, failed) {
		t.Errorf("a failing writer: %v, want %v", err, failed)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }
