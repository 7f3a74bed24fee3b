package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/internal/testkit/promtest"
)

// draSlice publishes one GPU of node gpu-0, as NVIDIA's DRA driver does
// (attribute uuid); draClaim is a claim its two pods share.
const draObjects = `apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-0
  pool: {name: gpu-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      uuid: {string: GPU-d0}
      index: {int: 0}
      productName: {string: NVIDIA H100 80GB HBM3}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
`

const draPod = `apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, labels: {team: infer}}
spec:
  nodeName: gpu-0
  resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
  containers: [{name: c, image: fake, resources: {claims: [{name: gpu}]}}]
---
`

// TestDRAClaimsFromAPIServer: a real API server holds a ResourceSlice
// (GPU-d0 on node gpu-0) and a ResourceClaim allocated that device and
// reserved by two pods; dcgm-exporter, as for DRA's pods, labels no pod on
// the GPU. With --kubeconfig the Prometheus source reads the claims: both
// pods hold the GPU (mode dra) and split it evenly, 300 s each of 600.
func TestDRAClaimsFromAPIServer(t *testing.T) {
	t.Parallel() // its settings are its own (testFactory)
	c := k8stest.Start(t)
	c.AddGPUNodes(1, "gpu-0")
	c.Apply(draObjects)
	c.WaitFor("the default ServiceAccount", 60*time.Second, func() bool { _, err := c.Kubectl("get", "serviceaccount", "default"); return err == nil })
	c.Apply(fmt.Sprintf(draPod, "dra-a") + fmt.Sprintf(draPod, "dra-b"))
	uid := func(pod string) string {
		out, err := c.Kubectl("get", "pod", pod, "-o", "jsonpath={.metadata.uid}")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	status, _ := json.Marshal(map[string]any{"status": map[string]any{
		"allocation": map[string]any{"devices": map[string]any{"results": []map[string]string{{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-0", "device": "gpu-0"}}},
			"nodeSelector": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchFields": []any{map[string]any{"key": "metadata.name", "operator": "In", "values": []string{"gpu-0"}}}}}}},
		"reservedFor": []map[string]string{{"resource": "pods", "name": "dra-a", "uid": uid("dra-a")}, {"resource": "pods", "name": "dra-b", "uid": uid("dra-b")}},
	}})
	if out, err := c.Kubectl("patch", "resourceclaim", "shared-gpu", "--subresource=status", "--type=merge", "-p", string(status)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c.WaitFor("the claim reserved by both pods", 30*time.Second, func() bool {
		out, err := c.Kubectl("get", "resourceclaim", "shared-gpu", "-o", "jsonpath={.status.reservedFor[*].name}")
		return err == nil && out == "dra-a dra-b"
	})

	start := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	var om bytes.Buffer
	fmt.Fprintf(&om, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for i := 0; i < 10; i++ {
		v := 40
		if i >= 5 {
			v = 0
		}
		fmt.Fprintf(&om, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-d0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-0\"} %d %d\n", v, start.Unix()+60*int64(i))
	}
	om.WriteString("# EOF\n")
	srv := promtest.Start(t, om.Bytes())
	var kubeconfig string
	for _, e := range c.Env {
		if k, ok := strings.CutPrefix(e, "KUBECONFIG="); ok {
			kubeconfig = k
		}
	}
	at := func(s int) string { return start.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339) }
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "60s", "--start", at(0), "--end", at(600)}
	prof := run(t, nil, append([]string{"profile", "--kubeconfig", kubeconfig, "-o", "-"}, src...)...)
	if prof.code != 0 || strings.Count(prof.out, `"sharing":{"mode":"dra"}`) != 2 {
		t.Fatalf("profile: exit %d %s\n%.2000s", prof.code, prof.errOut, prof.out)
	}
	r := run(t, nil, append([]string{"analyze", "--kubeconfig", kubeconfig, "-f", "json", "--report", "attribution", "--group-by", "workload"}, src...)...)
	if r.code != 0 {
		t.Fatalf("analyze: %s", r.errOut)
	}
	var rep struct {
		Attribution struct {
			Groups []struct {
				Key   []string `json:"key"`
				Held  float64  `json:"held_gpu_hours"`
				Basis string   `json:"basis"`
			} `json:"groups"`
		} `json:"attribution"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range rep.Attribution.Groups {
		got[g.Key[0]] = fmt.Sprintf("%.6f %s", g.Held, g.Basis)
	}
	want := fmt.Sprintf("%.6f even", 300.0/3600)
	if got["default/dra-a"] != want || got["default/dra-b"] != want {
		t.Errorf("held %v, want %s each", got, want)
	}
	// Without the API server the GPU is nobody's.
	if r := run(t, nil, append([]string{"analyze", "-f", "json", "--report", "attribution", "--group-by", "workload"}, src...)...); strings.Contains(r.out, "dra-a") {
		t.Errorf("without --kubeconfig the claims were read: %.500s", r.out)
	}
	// A kubeconfig that is not one is a one-line error.
	if r := run(t, nil, append([]string{"analyze", "--kubeconfig", "/nonexistent/kubeconfig"}, src...)...); r.code == 0 || strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 || !strings.Contains(r.errOut, "--kubeconfig") {
		t.Errorf("a missing kubeconfig: exit %d %q", r.code, r.errOut)
	}
}
