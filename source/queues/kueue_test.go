package queues

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
)

// fakeAPI serves lists by path; a path not given is 404, as a server
// that does not serve the group answers.
func fakeAPI(t *testing.T, lists map[string]string, status int) *kubeapi.Client {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := lists[r.URL.Path]
		switch {
		case status != 0:
			w.WriteHeader(status)
			fmt.Fprint(w, `{"message":"etcd is down"}`)
		case !ok:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"the server could not find the requested resource"}`)
		case strings.HasPrefix(body, "RAW:"):
			fmt.Fprint(w, strings.TrimPrefix(body, "RAW:"))
		default:
			fmt.Fprintf(w, `{"items":[%s]}`, body)
		}
	}))
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	path := filepath.Join(t.TempDir(), "kubeconfig")
	doc := fmt.Sprintf("apiVersion: v1\nkind: Config\ncurrent-context: t\ncontexts: [{name: t, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: %s, certificate-authority-data: %s}}]\nusers: [{name: u, user: {token: x}}]\n", srv.URL, ca)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := kubeapi.Load(path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadVersions: a server that serves only v1beta1 is read through it
// (its cohort field is spec.cohort); one that serves no Kueue gives no
// queues and no error; a server error is an error naming it.
func TestReadVersions(t *testing.T) {
	base := "/apis/kueue.x-k8s.io/v1beta1/"
	c := fakeAPI(t, map[string]string{
		base + "clusterqueues": `{"metadata":{"name":"a"},"spec":{"cohort":"ml","resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":"8","lendingLimit":"2"}]}]}]}}`,
		base + "localqueues":   `{"metadata":{"name":"lq","namespace":"ns"},"spec":{"clusterQueue":"a"}}`,
		base + "workloads": `{"metadata":{"name":"w","namespace":"ns","creationTimestamp":"2026-01-05T09:00:00Z"},"spec":{"queueName":"lq","podSets":[{"count":1,"template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]}}}]}},` +
			`{"metadata":{"name":"ghost","namespace":"ns"},"spec":{"queueName":"nope","podSets":[{"count":1,"template":{"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1"}}}]}}}]}},` +
			`{"metadata":{"name":"cpu","namespace":"ns"},"spec":{"queueName":"lq","podSets":[{"count":4,"template":{"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}]}}}]}}`,
	}, 0)
	b, err := Read(context.Background(), c)
	if err != nil || b == nil || strings.Join(b.Versions, ",") != "kueue.x-k8s.io/v1beta1" {
		t.Fatalf("v1beta1: %+v %v", b, err)
	}
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	qs := b.Queues(t0, t0.Add(time.Hour))
	if len(qs) != 1 || qs[0].Cohort != "ml" || *qs[0].NominalGPUs != 8 || *qs[0].LendingLimitGPUs != 2 || qs[0].BorrowingLimitGPUs != nil ||
		len(qs[0].Pending) != 1 || qs[0].Pending[0].GPUs != 1 || qs[0].Pending[0].EndS != 3600 {
		got, _ := json.Marshal(qs)
		t.Errorf("queues: %s", got)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `Workload ns/ghost: queue "nope" names no ClusterQueue`) {
		t.Errorf("warnings: %q", b.Warnings)
	}
	if b, err := Read(context.Background(), fakeAPI(t, nil, 0)); b != nil || err != nil {
		t.Errorf("no Kueue: %+v %v", b, err)
	}
	// A version seedance does not read: a warning naming it, no queues.
	old := fakeAPI(t, map[string]string{"/apis/kueue.x-k8s.io": `RAW:{"kind":"APIGroup","name":"kueue.x-k8s.io","versions":[{"groupVersion":"kueue.x-k8s.io/v1alpha9","version":"v1alpha9"}]}`}, 0)
	if b, err := Read(context.Background(), old); err != nil || b == nil || len(b.Queues(t0, t0)) != 0 || len(b.Warnings) != 1 ||
		b.Warnings[0] != "the API server serves kueue.x-k8s.io v1alpha9, none of the versions seedance reads (v1beta2, v1beta1): its queues are not read" {
		t.Errorf("an unknown version: %+v %v", b, err)
	}
	if _, err := Read(context.Background(), fakeAPI(t, nil, http.StatusInternalServerError)); err == nil || !strings.Contains(err.Error(), "HTTP 500: etcd is down") {
		t.Errorf("a server error: %v", err)
	}
}

// TestQuantity: the quantities of GPUs Kubernetes writes, and those that
// are not a count of GPUs.
func TestQuantity(t *testing.T) {
	for in, want := range map[string]float64{`"8"`: 8, `8`: 8, `"1k"`: 1000, `"500m"`: 0.5, `"2.5"`: 2.5, `null`: 0} {
		if got, err := quantity(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{`"1Ki"`, `"-1"`, `"NaN"`, `"2G"`, `true`, `"8 "`} {
		if _, err := quantity(json.RawMessage(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}
