package k8stest

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KueueCRDs are Kueue v0.19.2's own CRDs (config/components/crd/bases at
// commit 8eab6877), VolcanoCRDs Volcano v1.15.1's (config/crd/volcano/bases
// at commit 0a56ed33), gzipped as released in source/queues/testdata.
var (
	KueueCRDs   = []string{"clusterqueues", "localqueues", "workloads", "resourceflavors"}
	VolcanoCRDs = []string{"queues", "podgroups"}
	// KAICRDs are KAI Scheduler v0.20.1's (deployments/kai-scheduler/crds
	// at commit 5922dc7d).
	KAICRDs = []string{"queues", "podgroups"}
)

// InstallKueue creates Kueue's CRDs from root/source/queues/testdata
// (root: the module's root, relative to the test's package) and waits
// until the API server serves their v1beta2.
func (c *Cluster) InstallKueue(root string) {
	c.t.Helper()
	c.installCRDs(root, "kueue.x-k8s.io", "v1beta2", KueueCRDs)
}

// InstallVolcano creates Volcano's scheduling CRDs as InstallKueue does
// Kueue's.
func (c *Cluster) InstallVolcano(root string) {
	c.t.Helper()
	c.installCRDs(root, "scheduling.volcano.sh", "v1beta1", VolcanoCRDs)
}

// InstallKAI creates KAI Scheduler's Queue and PodGroup CRDs as
// InstallKueue does Kueue's.
func (c *Cluster) InstallKAI(root string) {
	c.t.Helper()
	c.installCRDs(root, "scheduling.run.ai", "v2", KAICRDs[:1])
	c.installCRDs(root, "scheduling.run.ai", "v2alpha2", KAICRDs[1:])
}

// installCRDs creates the group's CRDs of the names and waits until the
// API server serves them at version.
func (c *Cluster) installCRDs(root, group, version string, names []string) {
	c.t.Helper()
	dir, err := os.MkdirTemp("", "crds")
	if err != nil {
		c.t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, f := range names {
		if err := gunzip(filepath.Join(root, "source", "queues", "testdata", group+"_"+f+".yaml.gz"), filepath.Join(dir, f+".yaml")); err != nil {
			c.t.Fatal(err)
		}
	}
	// kubectl create: the Workload CRD is too large for apply's annotation.
	if out, err := c.Kubectl("create", "-f", dir); err != nil {
		c.t.Fatalf("%v\n%s", err, out)
	}
	var kinds []string
	for _, f := range names {
		kinds = append(kinds, f+"."+version+"."+group)
	}
	c.WaitFor(group+"'s CRDs served", 60*time.Second, func() bool {
		_, err := c.Kubectl("get", strings.Join(kinds, ","), "-A")
		return err == nil
	})
}

func gunzip(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return err
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(zr, 64<<20)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Kubeconfig is the cluster's KUBECONFIG.
func (c *Cluster) Kubeconfig() string {
	for _, e := range c.Env {
		if v, ok := strings.CutPrefix(e, "KUBECONFIG="); ok {
			return v
		}
	}
	c.t.Fatal("no KUBECONFIG in the cluster's environment")
	return ""
}

// Created is the creationTimestamp of the object kind/name in namespace.
func (c *Cluster) Created(kind, namespace, name string) time.Time {
	c.t.Helper()
	out, err := c.Kubectl("get", kind, name, "-n", namespace, "-o", "jsonpath={.metadata.creationTimestamp}")
	if err != nil {
		c.t.Fatal(err)
	}
	ts, err := time.Parse(time.RFC3339, strings.TrimSpace(out))
	if err != nil {
		c.t.Fatal(err)
	}
	return ts
}
