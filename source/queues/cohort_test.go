package queues

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCohortTrees: a ClusterQueue's cohort is the root of its cohort's
// tree (team-a and team-b under org; a parent that is no Cohort object,
// lab, is a root too); a tree with a cycle leaves its queues their own
// cohort, and a Cohort's own GPU quota is a warning.
func TestCohortTrees(t *testing.T) {
	base := "/apis/kueue.x-k8s.io/v1beta2/"
	cq := func(name, cohort string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"cohortName":%q,"resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":"2"}]}]}]}}`, name, cohort)
	}
	co := func(name, parent, gpus string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"parentName":%q,"resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":"nvidia.com/gpu","nominalQuota":%q},{"name":"cpu","nominalQuota":"64"}]}]}]}}`, name, parent, gpus)
	}
	c := fakeAPI(t, map[string]string{
		base + "clusterqueues": strings.Join([]string{cq("a", "team-a"), cq("b", "team-b"), cq("c", "x"), cq("d", "solo"), cq("e", "sub"), cq("f", "")}, ","),
		base + "cohorts":       strings.Join([]string{co("team-a", "org", "0"), co("team-b", "org", "0"), co("org", "", "4"), co("x", "y", "0"), co("y", "x", "0"), co("sub", "lab", "0")}, ","),
		base + "localqueues":   "",
		base + "workloads":     "",
	}, 0)
	b, err := Read(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var got []string
	for _, q := range b.Queues(t0, t0.Add(time.Hour)) {
		got = append(got, q.Name+"="+q.Cohort)
	}
	if strings.Join(got, " ") != "a=org b=org c=x d=solo e=lab f=" {
		t.Errorf("cohorts: %v", got)
	}
	want := []string{"Cohort org has GPU quota of its own, a pool its subtree shares: not counted in any queue's quota or lending",
		"Kueue's cohort tree has a cycle through x, y (Kueue disables its queues): each of their queues keeps its own cohort"}
	if strings.Join(b.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s", strings.Join(b.Warnings, "\n"))
	}
}
