package k8stest

import (
	"strings"
	"testing"
	"time"
)

// TestControlPlane: the control plane starts, kwok's nodes are Ready with
// GPUs, and a Deployment's pod is scheduled and Running.
func TestControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes control plane")
	}
	c := Start(t)
	c.AddGPUNodes(8, "gpu-a", "gpu-b")
	c.Apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: fake
        resources: {limits: {nvidia.com/gpu: "2"}}
`)
	c.WaitFor("the pod Running", 60*time.Second, func() bool {
		out, _ := c.Kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.phase} {.items[*].spec.nodeName}")
		return strings.HasPrefix(out, "Running gpu-")
	})
}

// TestPollGivesUpWhenAComponentExits: a component that exits (a port taken
// in the meantime, say) ends the wait at once rather than after its
// deadline, and is named, so that Start can try again on other ports.
func TestPollGivesUpWhenAComponentExits(t *testing.T) {
	c := &Cluster{dir: t.TempDir(), bin: "/bin", t: t}
	c.start(t, "false")
	// An hour: were poll to wait for its deadline, the test would time out.
	if c.poll(time.Hour, func() bool { return false }) {
		t.Fatal("poll succeeded")
	}
	if c.exited() != "false" {
		t.Fatalf("exited = %q", c.exited())
	}
	c.stop()
}
