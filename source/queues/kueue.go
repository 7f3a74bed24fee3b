// Kueue: ClusterQueues (cohort, GPU quota per flavor, borrowing and
// lending limits), LocalQueues (which ClusterQueue a namespace's queue
// feeds) and Workloads (what each asked for, when it was created, when its
// quota was reserved and when it finished), kueue.x-k8s.io v1beta2 (Kueue
// v0.15 and later), else v1beta1.

package queues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// KueueVersions are Kueue's API versions tried, newest first.
var KueueVersions = []string{"v1beta2", "v1beta1"}

// readKueue lists Kueue's ClusterQueues, LocalQueues and Workloads into
// b; found is false when the server serves no Kueue version.
func (b *Book) readKueue(ctx context.Context, c *kubeapi.Client) (found bool, err error) {
	for _, v := range KueueVersions {
		err := b.readKueueAt(ctx, c, "/apis/kueue.x-k8s.io/"+v)
		switch {
		case errors.Is(err, kubeapi.ErrNotFound):
			continue
		case err != nil:
			return false, fmt.Errorf("kueue.x-k8s.io/%s: %w", v, err)
		}
		b.Versions = append(b.Versions, "kueue.x-k8s.io/"+v)
		return true, nil
	}
	b.unserved(ctx, c, "kueue.x-k8s.io", KueueVersions)
	return false, nil
}

func (b *Book) readKueueAt(ctx context.Context, c *kubeapi.Client, base string) error {
	if err := c.List(ctx, base+"/clusterqueues", b.clusterQueue); err != nil {
		return err
	}
	if err := b.readCohorts(ctx, c, base); err != nil {
		return err
	}
	local := map[string]string{} // namespace/name → ClusterQueue
	err := each(ctx, c, base+"/localqueues", "LocalQueue", func(lq *localQueue) {
		local[lq.Metadata.Namespace+"/"+lq.Metadata.Name] = lq.Spec.ClusterQueue
	})
	if err != nil {
		return err
	}
	var used []flavorUse
	err = each(ctx, c, base+"/workloads", "Workload", func(w *workload) {
		if b.workload(w, local) {
			used = append(used, w.gpuFlavors()...)
		}
	})
	if err != nil || len(used) == 0 {
		return err
	}
	b.checkFlavors(ctx, c, base, used)
	return nil
}

// localQueue is what seedance reads of a LocalQueue: the ClusterQueue it
// feeds.
type localQueue struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		ClusterQueue string `json:"clusterQueue"`
	} `json:"spec"`
}

type meta struct {
	Namespace         string    `json:"namespace"`
	Name              string    `json:"name"`
	CreationTimestamp time.Time `json:"creationTimestamp"`
	OwnerReferences   []struct {
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Controller bool   `json:"controller"`
	} `json:"ownerReferences"`
}

// resourceGroups are a ClusterQueue's or a Cohort's quota: per flavor,
// each resource's nominal quota and limits.
type resourceGroups []struct {
	Flavors []struct {
		Name      string `json:"name"`
		Resources []struct {
			Name           string          `json:"name"`
			NominalQuota   json.RawMessage `json:"nominalQuota"`
			BorrowingLimit json.RawMessage `json:"borrowingLimit"`
			LendingLimit   json.RawMessage `json:"lendingLimit"`
		} `json:"resources"`
	} `json:"flavors"`
}

// clusterQueue reads one ClusterQueue: its cohort (v1beta2 cohortName,
// v1beta1 cohort) and its GPU quota summed over flavors.
func (b *Book) clusterQueue(raw json.RawMessage) error {
	var cq struct {
		Metadata meta `json:"metadata"`
		Spec     struct {
			Cohort         string         `json:"cohort"`
			CohortName     string         `json:"cohortName"`
			ResourceGroups resourceGroups `json:"resourceGroups"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &cq); err != nil {
		return fmt.Errorf("a ClusterQueue: %v", err)
	}
	name := cq.Metadata.Name
	q := profile.Queue{Name: name, Kind: profile.QueueKueue, Cohort: cq.Spec.CohortName}
	if q.Cohort == "" {
		q.Cohort = cq.Spec.Cohort
	}
	var sums quotaSums
	var refs []string
	for gi, rg := range cq.Spec.ResourceGroups {
		for fi, f := range rg.Flavors {
			for ri, r := range f.Resources {
				if !IsGPU(r.Name) {
					continue
				}
				refs = append(refs, fmt.Sprintf("/spec/resourceGroups/%d/flavors/%d/resources/%d/nominalQuota", gi, fi, ri))
				if err := sums.add(r.NominalQuota, r.BorrowingLimit, r.LendingLimit); err != nil {
					b.Warnings = append(b.Warnings, fmt.Sprintf("ClusterQueue %s flavor %s %s: %v: its quota unknown", name, f.Name, r.Name, err))
					sums.bad = true
				}
				if !slices.Contains(q.Flavors, f.Name) {
					q.Flavors = append(q.Flavors, f.Name)
				}
			}
		}
	}
	sums.set(&q)
	if len(refs) == 1 && q.NominalGPUs != nil {
		q.QuotaRef = refs[0]
	}
	b.queues[name] = &queue{q: q}
	return nil
}
