package profile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzExposition: any dcgm-exporter scrape is parsed into GPUs or refused
// with one line; building the profile never panics.
func FuzzExposition(f *testing.F) {
	f.Add([]byte("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"h\",pod=\"p\",namespace=\"n\"} 37\n"))
	f.Add([]byte("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",GPU_I_ID=\"1\",GPU_I_PROFILE=\"1g.10gb\",exported_pod=\"x\"} 9223372036854775794 1767571200000\n"))
	f.Add([]byte("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 1 200\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 2 100\n"))
	f.Add([]byte("DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"GPU-1\"} 5\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 1e300\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fams, err := ParseExposition(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		b := newDCGMBuilder()
		AddFamilies(b, fams, "host", time.Unix(1767571200, 0))
		AddFamilies(b, fams, "host", time.Unix(1767571215, 0))
		p := &Profile{SchemaVersion: SchemaVersion, StartedAt: time.Unix(1767571200, 0), EndedAt: time.Unix(1767571230, 0), IntervalS: 15}
		p.Nodes = b.build(p.StartedAt.UnixMilli())
		var out bytes.Buffer
		if err := Encode(&out, p); err != nil {
			t.Fatalf("a parsed scrape does not encode: %v", err)
		}
		// What a source writes must pass the reader's own limits.
		if _, err := Read(&out); err != nil && !strings.Contains(err.Error(), "longer than") && !strings.Contains(err.Error(), "more than") {
			t.Fatalf("a parsed scrape does not read back: %v", err)
		}
	})
}

// FuzzPromAnswer: any Prometheus answer is parsed or refused; its series
// go into a profile without panicking.
func FuzzPromAnswer(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","gpu":"0","Hostname":"h"},"values":[[1767571200,"5"],[1767571215,"7"]]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"UUID":"GPU-1","gpu":"0","exported_pod":"p","pod":"dcgm"},"value":[1767571200.5,"NaN"]}]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parsePromAnswer(bytes.NewReader(data))
		if err != nil {
			return
		}
		b := newDCGMBuilder()
		start, end := time.Unix(1767571200, 0), time.Unix(1767574800, 0)
		for _, s := range a.Series {
			addSeries(b, "DCGM_FI_DEV_GPU_UTIL", s, start, end)
			addSeries(b, "DCGM_FI_DEV_POWER_USAGE", s, start, end)
		}
		p := &Profile{SchemaVersion: SchemaVersion, StartedAt: start, EndedAt: end, IntervalS: 15, Nodes: b.build(start.UnixMilli())}
		var out bytes.Buffer
		Encode(&out, p)
		if _, err := Read(&out); err != nil && !strings.Contains(err.Error(), "longer than") && !strings.Contains(err.Error(), "more than") {
			t.Fatalf("what the Prometheus source builds does not read back: %v", err)
		}
	})
}

// TestPairsOutOfOrder: samples that run backwards or repeat a timestamp
// (a misbehaving Prometheus) give an ascending time axis, no panic.
func TestPairsOutOfOrder(t *testing.T) {
	b := newDCGMBuilder()
	id := DCGMIdentity{Key: GPUKey{Node: "n", UUID: "GPU-1"}}
	b.add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{3000, 3}, {1000, 1}, {2000, 2}, {2000, 22}})
	b.add(id, "DCGM_FI_DEV_POWER_USAGE", []Pair{{2000, 200}, {500, 50}})
	b.add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{4000, 4}, {3500, 35}})
	g := b.build(0)[0].GPUs[0]
	if got := fmt.Sprint(g.Series.T); got != "[0.5 1 2 3 3.5 4]" {
		t.Fatalf("t = %s", got)
	}
	if got := fmt.Sprint(g.Series.GPUUtilPct); got != "[NaN 1 22 3 35 4]" {
		t.Fatalf("util = %s", got)
	}
	if err := validateGPU(&g); err != nil {
		t.Fatal(err)
	}
}
