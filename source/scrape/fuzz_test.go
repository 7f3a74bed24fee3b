package scrape

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/dcgm"
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
		b := dcgm.NewBuilder(15000)
		AddFamilies(b, fams, "host", time.Unix(1767571200, 0))
		AddFamilies(b, fams, "host", time.Unix(1767571215, 0))
		p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: time.Unix(1767571200, 0), EndedAt: time.Unix(1767571230, 0), IntervalS: 15}
		nodes, err := b.Build(p.StartedAt.UnixMilli(), p.EndedAt.UnixMilli())
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "both have index") {
				t.Fatalf("a build error that is not one GPU index's: %q", err)
			}
			return
		}
		p.Nodes = nodes
		var out bytes.Buffer
		if err := profile.Encode(&out, p); err != nil {
			t.Fatalf("a parsed scrape does not encode: %v", err)
		}
		// What a source writes must pass the reader's own limits.
		if _, err := profile.Read(&out); err != nil && !strings.Contains(err.Error(), "longer than") && !strings.Contains(err.Error(), "more than") {
			t.Fatalf("a parsed scrape does not read back: %v", err)
		}
	})
}
