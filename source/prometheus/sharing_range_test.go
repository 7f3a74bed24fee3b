package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
)

// fakeShares answers readSharing's and measureUse's queries with series
// whose readings are NaN, 300 %, negative or sensible.
func fakeShares(t *testing.T) *promClient {
	t.Helper()
	vec := func(series ...string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(series, ",") + `]}}`
	}
	one := func(labels, v string) string {
		return fmt.Sprintf(`{"metric":{%s},"value":[1767571200,%q]}`, labels, v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.FormValue("query")
		switch {
		case strings.Contains(q, "kube_pod_container_resource_requests"):
			fmt.Fprint(w, vec(one(`"namespace":"ml","pod":"a","resource":"nvidia_com_gpucores"`, "300"),
				one(`"namespace":"ml","pod":"b","resource":"nvidia_com_gpucores"`, "40"),
				one(`"namespace":"ml","pod":"c","resource":"nvidia_com_gpumem"`, "-5")))
		case strings.Contains(q, "vGPUCoreAllocated"):
			fmt.Fprint(w, vec(one(`"podnamespace":"ml","podname":"d"`, "NaN"), one(`"podnamespace":"ml","podname":"e"`, "-1")))
		case strings.Contains(q, "Device_utilization_desc_of_container"):
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[`+
				`{"metric":{"deviceuuid":"GPU-1","podnamespace":"ml","podname":"b"},"values":[[1767571200,"30"],[1767571260,"250"],[1767571320,"NaN"]]}]}}`)
		default:
			fmt.Fprint(w, vec())
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return &promClient{base: u, http: srv.Client(), backoff: time.Millisecond}
}

// TestOutOfRangeSharingNoted (#56): a request of 300 % of a GPU's cores,
// a negative memory request, HAMi's NaN and negative cores and a
// container's 250 % utilization change nothing — the pod asked nothing,
// its use at that time is unmeasured — and each metric is one note naming
// its first such series and how many there were.
func TestOutOfRangeSharingNoted(t *testing.T) {
	c := fakeShares(t)
	start := time.Unix(1767571200, 0)
	s := readSharing(context.Background(), c, "", start, start.Add(5*time.Minute), func() {})
	if s.err != nil {
		t.Fatal(s.err)
	}
	for _, pod := range []string{"ml/a", "ml/c", "ml/d", "ml/e"} {
		if s.asked[pod] != nil {
			t.Errorf("%s: an out-of-range reading was taken: %+v", pod, *s.asked[pod])
		}
	}
	if a := s.asked["ml/b"]; a == nil || a.CoresPct != 40 {
		t.Errorf("ml/b: %+v, want 40 %% of the cores", a)
	}
	n := profile.Node{Name: "n", GPUs: []profile.GPU{{Index: 0, UUID: "GPU-1", Series: profile.Series{T: profile.Values{0, 60, 120}}}},
		Workloads: []profile.Workload{{ID: "ml/b", GPUs: []int{0}}, {ID: "ml/x", GPUs: []int{0}}}}
	r := &reading{c: c}
	if note := r.measureUse(context.Background(), &n, start.UnixMilli(), &s.bad); note != "" {
		t.Fatal(note)
	}
	if u := n.GPUs[0].Usage; len(u) != 1 || u[0].UtilPct[0] != 30 || u[0].UtilPct[1] != profile.Null && u[0].UtilPct[1] != 30 {
		t.Errorf("usage %+v: 250 %% and NaN must not count", u)
	}
	want := []string{
		`2 out-of-range reading(s) of Device_utilization_desc_of_container ignored (percent, 0–100): the first, Device_utilization_desc_of_container{deviceuuid="GPU-1",podname="b",podnamespace="ml"} = 250`,
		`1 out-of-range reading(s) of kube_pod_container_resource_requests ignored (cores in percent, 0–100): the first, kube_pod_container_resource_requests{namespace="ml",pod="a",resource="nvidia_com_gpucores"} = 300`,
		`1 out-of-range reading(s) of kube_pod_container_resource_requests ignored (memory in MiB, 0–953674316406): the first, kube_pod_container_resource_requests{namespace="ml",pod="c",resource="nvidia_com_gpumem"} = -5`,
		`2 out-of-range reading(s) of vGPUCoreAllocated ignored (cores in percent, 0–100): the first, vGPUCoreAllocated{podname="d",podnamespace="ml"} = NaN`,
	}
	got := s.bad.notes()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
