package prometheus

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/jsonscan"
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
		nodes, err := b.Build(start.UnixMilli(), end.UnixMilli())
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "both have index") {
				t.Fatalf("a build error that is not one GPU index's: %q", err)
			}
			return
		}
		p := &profile.Profile{SchemaVersion: profile.SchemaVersion, StartedAt: start, EndedAt: end, IntervalS: 15, Nodes: nodes}
		var out bytes.Buffer
		if err := profile.Encode(&out, p); err != nil {
			t.Fatal(err)
		}
		if _, err := profile.Read(&out); err != nil && !strings.Contains(err.Error(), "longer than") && !strings.Contains(err.Error(), "more than") {
			t.Fatalf("what the Prometheus source builds does not read back: %v", err)
		}
	})
}

// FuzzLabels: the series' labels read as encoding/json reads them (names
// keep their case; escapes; a repeated name keeps its last value), and an
// object it refuses is refused.
func FuzzLabels(f *testing.F) {
	for _, s := range []string{`{"UUID":"GPU-1","Hostname":"h","gpu":"0"}`, `{}`, `null`, `{"a":"x\"y\u00e9","a":"z"}`,
		`{"a":1}`, `{"a":"b",}`, `{"a":"b"`, `{"Pod":"p","pod":"q"}`, `{"a":"\ud800"}`, `{"a":null}`, `{null:"a"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]string
		wantErr := json.Unmarshal(data, &want)
		sc := jsonscan.New(bytes.NewReader(data))
		got, err := parseLabels(sc, map[string]string{})
		if err == nil {
			err = sc.End()
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", data, err, wantErr)
		}
		if err == nil && !maps.Equal(got, want) {
			t.Fatalf("%q: %v, encoding/json: %v", data, got, want)
		}
	})
}
