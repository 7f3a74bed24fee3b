package queues

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// Kueue's cohorts form trees (kueue v0.19.2, apis/kueue/v1beta2
// cohort_types.go): a Cohort object names its parent (spec.parentName; a
// parent that is no Cohort object is a root all the same), and the
// ClusterQueues of a whole tree borrow from one another. A ClusterQueue's
// cohort is therefore the root of its cohort's tree: the queues that can
// lend to it and wait beside it (docs/queues.md, Kueue). A tree with a
// cycle, which Kueue disables, leaves its queues their own cohort, with a
// warning; a Cohort's own quota (a pool its subtree shares) is a warning
// that it is not counted.

// kueueCohort is what seedance reads of a Cohort.
type kueueCohort struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		ParentName     string         `json:"parentName"`
		ResourceGroups resourceGroups `json:"resourceGroups"`
	} `json:"spec"`
}

// readCohorts lists the Cohorts at base and gives each Kueue queue the
// root of its cohort's tree. A server without Cohorts (an older Kueue)
// has flat cohorts.
func (b *Book) readCohorts(ctx context.Context, c *kubeapi.Client, base string) error {
	parent := map[string]string{}
	err := each(ctx, c, base+"/cohorts", "Cohort", func(co *kueueCohort) {
		parent[co.Metadata.Name] = co.Spec.ParentName
		if co.Spec.ResourceGroups.hasGPUs() {
			b.Warnings = append(b.Warnings, fmt.Sprintf("Cohort %s has GPU quota of its own, a pool its subtree shares: not counted in any queue's quota or lending", co.Metadata.Name))
		}
	})
	if errors.Is(err, kubeapi.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cyclic := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(b.queues)) {
		q := &b.queues[name].q
		if q.Kind != profile.QueueKueue || q.Cohort == "" {
			continue
		}
		root, path := rootOf(q.Cohort, parent)
		if root == "" {
			for _, p := range path {
				cyclic[p] = true
			}
			continue
		}
		q.Cohort = root
	}
	if len(cyclic) > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Kueue's cohort tree has a cycle through %s (Kueue disables its queues): each of their queues keeps its own cohort",
			strings.Join(slices.Sorted(maps.Keys(cyclic)), ", ")))
	}
	return nil
}

// rootOf follows cohort's parents to the root of its tree; "" and the
// cohorts walked when they lead back to one of them.
func rootOf(cohort string, parent map[string]string) (root string, path []string) {
	seen := map[string]bool{}
	for c := cohort; ; c = parent[c] {
		if seen[c] {
			return "", path
		}
		seen[c] = true
		path = append(path, c)
		if parent[c] == "" {
			return c, path
		}
	}
}

// hasGPUs is whether the groups give a GPU resource a nominal quota
// other than zero.
func (rgs resourceGroups) hasGPUs() bool {
	for _, rg := range rgs {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				if n, err := quantity(r.NominalQuota); IsGPU(r.Name) && (err != nil || n > 0) {
					return true
				}
			}
		}
	}
	return false
}
