package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const minimalProfile = `{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z",
"ended_at":"2026-01-05T09:00:03Z","interval_s":1,"future_field":{"x":1},
"nodes":[{"name":"n1","gpus":[{"index":0,"uuid":"GPU-1","series":{"t":[0,1,2],"gpu_util_pct":[5,null,7]}}]}]}`

func TestReadMinimal(t *testing.T) {
	p, err := Read(strings.NewReader(minimalProfile))
	if err != nil {
		t.Fatal(err)
	}
	g := p.Nodes[0].GPUs[0]
	if g.Series.Len() != 3 || g.Series.GPUUtilPct[0] != 5 || !IsNull(g.Series.GPUUtilPct[1]) {
		t.Fatalf("series = %+v", g.Series)
	}
	if g.Series.PowerW != nil {
		t.Fatal("absent metric should be nil")
	}
	if !p.EndedAt.Equal(time.Date(2026, 1, 5, 9, 0, 3, 0, time.UTC)) {
		t.Fatalf("ended_at = %v", p.EndedAt)
	}
}

func TestReadRejects(t *testing.T) {
	base := minimalProfile
	tests := []struct {
		name, doc, want string
	}{
		{"empty", ``, "empty input"},
		{"truncated", base[:len(base)/2], "truncated JSON"},
		{"not json", `hello`, "JSON syntax error"},
		{"wrong major", strings.Replace(base, "profile/v1", "profile/v2", 1), "major version 2"},
		{"not seedance", strings.Replace(base, "seedance.profile/v1", "other/v1", 1), "not a seedance profile"},
		{"no schema", `{"nodes":[]}`, "schema_version is missing"},
		{"length mismatch", strings.Replace(base, `[5,null,7]`, `[5,null]`, 1), "gpu_util_pct has 2 values but series.t has 3"},
		{"negative", strings.Replace(base, `[5,null,7]`, `[5,-1,7]`, 1), "negative"},
		{"not ascending", strings.Replace(base, `"t":[0,1,2]`, `"t":[0,2,1]`, 1), "not ascending at sample 2"},
		{"repeated t", strings.Replace(base, `"t":[0,1,2]`, `"t":[0,1,1]`, 1), "not ascending"},
		{"null t", strings.Replace(base, `"t":[0,1,2]`, `"t":[0,null,2]`, 1), "series.t[1] is null"},
		{"no t", strings.Replace(base, `"t":[0,1,2],`, ``, 1), "series.t is missing"},
		{"no index", strings.Replace(base, `"index":0,`, ``, 1), "index is missing"},
		{"no uuid", strings.Replace(base, `"uuid":"GPU-1",`, ``, 1), "uuid is missing"},
		{"string in series", strings.Replace(base, `[5,null,7]`, `[5,"x",7]`, 1), "in a number column"},
		{"NaN literal", strings.Replace(base, `[5,null,7]`, `[5,NaN,7]`, 1), "JSON syntax error"},
		{"zero interval", strings.Replace(base, `"interval_s":1`, `"interval_s":0`, 1), "interval_s must be a positive"},
		{"end before start", strings.Replace(base, `09:00:03Z`, `08:00:00Z`, 1), "before started_at"},
		{"unnamed node", strings.Replace(base, `"name":"n1",`, ``, 1), "nodes[0] has no name"},
		// Wrong types: named by key, with what was expected.
		{"uuid a number", strings.Replace(base, `"uuid":"GPU-1"`, `"uuid":5`, 1), `node "n1" gpus[0] uuid: expected a string, found a number`},
		{"time a number", strings.Replace(base, `"started_at":"2026-01-05T09:00:00Z"`, `"started_at":5`, 1), `started_at: expected an RFC 3339 time such as "2026-01-05T09:00:00Z"`},
		{"interval a string", strings.Replace(base, `"interval_s":1`, `"interval_s":"x"`, 1), "interval_s: expected a number, found a string"},
		// Hostile documents: each is refused at its root, in one line.
		{"deep nesting", strings.Replace(base, `"nodes":`, `"x":`+strings.Repeat("[", 100000)+`,"nodes":`, 1), "nesting deeper than 64"},
		{"giant string", strings.Replace(base, `"name":"n1"`, `"name":"`+strings.Repeat("n", MaxStringBytes+10)+`"`, 1), "a string longer than 64 KiB"},
		{"long node name", strings.Replace(base, `"name":"n1"`, `"name":"`+strings.Repeat("n", 300)+`"`, 1), "node name of 300 bytes"},
		{"duplicate key", strings.Replace(base, `"t":[0,1,2]`, `"t":[0,1,2],"t":[0,1,2]`, 1), `key "t" appears twice`},
		{"duplicate node", strings.Replace(base, `"nodes":[`, `"nodes":[{"name":"n1","gpus":[]},`, 1), `a second node named "n1"`},
		{"duplicate uuid", strings.Replace(base, `"gpus":[`, `"gpus":[{"index":1,"uuid":"GPU-1","series":{"t":[0]}},`, 1), `uuid "GPU-1" appears twice`},
		{"huge utilization", strings.Replace(base, `[5,null,7]`, `[5,1e308,7]`, 1), "above 100 %"},
		{"year 9999", strings.Replace(base, `2026-01-05T09:00:03Z`, `9999-01-05T09:00:03Z`, 1), "outside 1970–2199"},
		{"long span", strings.Replace(base, `2026-01-05T09:00:03Z`, `2028-01-05T09:00:03Z`, 1), "more than the 400 days"},
		{"tiny interval", strings.Replace(base, `"interval_s":1`, `"interval_s":1e-300`, 1), "interval_s 1e-300 is outside"},
		{"ragged topology", strings.Replace(base, `"name":"n1",`, `"name":"n1","topology":{"gpus":[{"index":0},{"index":1}],"matrix":[["X","NV12"],["NV12"]]},`, 1), "matrix row 1 has 1 cells for 2 GPUs"},
		{"negative bandwidth", strings.Replace(base, `"name":"n1",`, `"name":"n1","topology":{"gpus":[{"index":0}],"matrix":[["X"]],"nvlink_gbps":[[-5]]},`, 1), "nvlink_gbps[0][0] is -5"},
		{"huge CPU list", strings.Replace(base, `"name":"n1",`, `"name":"n1","workloads":[{"id":"p","cpus_allowed":"0-99999999"}],`, 1), "names CPU 99999999, above 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestWriteReadGzipAndStdin(t *testing.T) {
	p, err := Read(strings.NewReader(minimalProfile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"p.json", "p.json.gz", "p.json.zst"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, p); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		if gz := raw[0] == 0x1f && raw[1] == 0x8b; gz != strings.HasSuffix(name, ".gz") {
			t.Fatalf("%s: gzip = %v", name, gz)
		}
		if zst := bytes.HasPrefix(raw, zstdMagic); zst != strings.HasSuffix(name, ".zst") {
			t.Fatalf("%s: zstd = %v", name, zst)
		}
		// Readers detect gzip and zstd by magic bytes, not by name; "-"
		// is stdin.
		back, err := ReadFile("-", bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if back.Nodes[0].GPUs[0].Series.GPUUtilPct[2] != 7 {
			t.Fatalf("%s: round trip lost data", name)
		}
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "nope.json"), nil)
	if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nope.json") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(minimalProfile))
	f.Add([]byte(`{"schema_version":"seedance.profile/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, p); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&buf); err != nil {
			t.Fatalf("re-read of a valid profile failed: %v", err)
		}
	})
}

// TestReadKeepsEveryHeaderField: a profile read whole has every field of
// its header, context_s and cluster included, as its stream does.
func TestReadKeepsEveryHeaderField(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	in := &Profile{SchemaVersion: SchemaVersion, Generator: Generator{Name: "test"}, Source: SourcePrometheus, Cluster: "a", StartedAt: t0,
		EndedAt: t0.Add(time.Minute), IntervalS: 15, ContextS: 30, Complete: true, Notes: []string{"n"}, PendingUnknown: "p", Nodes: []Node{}}
	out := reread(t, in)
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("read %+v\nwrote %+v", out, in)
	}
}
