package recommend

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/internal/testkit/k8stest"
	"github.com/seedance/seedance/source/queues"
)

// TestQuotaScriptOnVolcanoAndKAI (#58): the quota what-if of a Volcano
// Queue (its deserved nvidia.com/gpu, a quantity) and a KAI Queue (its
// gpu quota, a number), their quota references as the source read them
// from a real API server with the schedulers' own CRDs: the dry run
// changes nothing, --execute sets both, and a second run leaves them
// alone and ends non-zero.
func TestQuotaScriptOnVolcanoAndKAI(t *testing.T) {
	c := k8stest.Start(t)
	c.InstallVolcano("..")
	c.InstallKAI("..")
	c.Apply(`apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 1, deserved: {nvidia.com/gpu: "8", cpu: "64"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 6, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
`)
	kc, err := kubeapi.Load(c.Kubeconfig(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := queues.Read(context.Background(), kc)
	if err != nil || b == nil {
		t.Fatalf("read: %v", err)
	}
	var changes []analyze.QuotaChange
	proposed := map[string]float64{"research": 3, "kai/team-a": 2} // KAI is named kai/… beside Volcano
	for _, q := range b.Queues(time.Now(), time.Now()) {
		changes = append(changes, analyze.QuotaChange{Queue: q.Name, Kind: q.Kind, NominalGPUs: *q.NominalGPUs, ProposedGPUs: proposed[q.Name], Why: "p95", QuotaRef: q.QuotaRef})
	}
	var s bytes.Buffer
	if err := QuotaScript(&s, changes); err != nil || strings.Count(s.String(), "\nchange ") != 2 {
		t.Fatalf("script (%v):\n%s", err, s.String())
	}
	run := scriptRun(t, s.Bytes(), c.Env)
	get := func(resource, path string) string {
		out, err := c.Kubectl("get", resource, map[string]string{"queues.scheduling.volcano.sh": "research", "queues.v2.scheduling.run.ai": "team-a"}[resource], "-o", "jsonpath={"+path+"}")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	volcano := func() string { return get("queues.scheduling.volcano.sh", `.spec.deserved.nvidia\.com/gpu`) }
	kai := func() string { return get("queues.v2.scheduling.run.ai", ".spec.resources.gpu.quota") }
	if out, err := run(); err != nil || volcano() != "8" || kai() != "6" || strings.Count(out, "dry run: ") != 2 {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if out, err := run("--execute"); err != nil || volcano() != "3" || kai() != "2" {
		t.Fatalf("--execute: %v, volcano %q kai %q\n%s", err, volcano(), kai(), out)
	}
	if out, err := run("--execute"); err == nil || !strings.Contains(out, "queues.scheduling.volcano.sh research: its GPU quota is now 3, not 8 as analyzed: left alone") {
		t.Errorf("a second run: %v\n%s", err, out)
	}
}
