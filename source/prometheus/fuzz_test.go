package prometheus

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/dcgm"
)

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
		b := dcgm.NewBuilder(15000)
		start, end := time.Unix(1767571200, 0), time.Unix(1767574800, 0)
		for _, s := range a.Series {
			addSeries(b, "DCGM_FI_DEV_GPU_UTIL", s, start, end)
			addSeries(b, "DCGM_FI_DEV_POWER_USAGE", s, start, end)
		}
		p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: start, EndedAt: end, IntervalS: 15, Nodes: b.Build(start.UnixMilli(), end.UnixMilli())}
		var out bytes.Buffer
		if err := profile.Encode(&out, p); err != nil {
			t.Fatal(err)
		}
		if _, err := profile.Read(&out); err != nil && !strings.Contains(err.Error(), "longer than") && !strings.Contains(err.Error(), "more than") {
			t.Fatalf("what the Prometheus source builds does not read back: %v", err)
		}
	})
}
