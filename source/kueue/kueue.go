// Package kueue reads Kueue's queue structure from the Kubernetes API
// server (kueue.x-k8s.io v1beta2, else v1beta1; Kueue v0.15 and later
// serve v1beta2): ClusterQueues (cohort, GPU quota per flavor, borrowing
// and lending limits), LocalQueues (which ClusterQueue a namespace's queue
// feeds) and Workloads (what each asked for, when it was created, when
// its quota was reserved and when it finished). It gives a profile its
// Queues and each pod its queue (docs/queues.md). What it reads is the
// objects as they are at the read: a Workload's conditions keep its latest
// admission only.
package kueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// Versions are the API versions tried, newest first.
var Versions = []string{"v1beta2", "v1beta1"}

// Book is what the read found: the ClusterQueues as profile queues (the
// spans in absolute time until Queues places them), and which pods'
// owners were admitted through which queue.
type Book struct {
	Version string
	queues  map[string]*queue
	// owners maps namespace/Kind/name (a Job, a Pod) to its ClusterQueue.
	owners map[string]string
	// Warnings name the objects that could not be read whole.
	Warnings []string
}

type queue struct {
	q              profile.Queue
	admitted, wait []span
}

type span struct {
	workload   string
	gpus       float64
	start, end time.Time // end zero: still going
}

// Read lists the ClusterQueues, LocalQueues and Workloads. A server that
// serves no Kueue version gives a nil Book and no error: no queues.
func Read(ctx context.Context, c *kubeapi.Client) (*Book, error) {
	for _, v := range Versions {
		b := &Book{Version: v, queues: map[string]*queue{}, owners: map[string]string{}}
		err := b.read(ctx, c, "/apis/kueue.x-k8s.io/"+v)
		switch {
		case errors.Is(err, kubeapi.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("kueue.x-k8s.io/%s: %w", v, err)
		}
		return b, nil
	}
	return nil, nil
}

func (b *Book) read(ctx context.Context, c *kubeapi.Client, base string) error {
	if err := c.List(ctx, base+"/clusterqueues", b.clusterQueue); err != nil {
		return err
	}
	local := map[string]string{} // namespace/name → ClusterQueue
	err := c.List(ctx, base+"/localqueues", func(raw json.RawMessage) error {
		var lq struct {
			Metadata meta `json:"metadata"`
			Spec     struct {
				ClusterQueue string `json:"clusterQueue"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &lq); err != nil {
			return fmt.Errorf("a LocalQueue: %v", err)
		}
		local[lq.Metadata.Namespace+"/"+lq.Metadata.Name] = lq.Spec.ClusterQueue
		return nil
	})
	if err != nil {
		return err
	}
	return c.List(ctx, base+"/workloads", func(raw json.RawMessage) error {
		var w workload
		if err := json.Unmarshal(raw, &w); err != nil {
			return fmt.Errorf("a Workload: %v", err)
		}
		b.workload(&w, local)
		return nil
	})
}

type meta struct {
	Namespace         string    `json:"namespace"`
	Name              string    `json:"name"`
	CreationTimestamp time.Time `json:"creationTimestamp"`
	OwnerReferences   []struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"ownerReferences"`
}

// clusterQueue reads one ClusterQueue: its cohort (v1beta2 cohortName,
// v1beta1 cohort) and its GPU quota summed over flavors.
func (b *Book) clusterQueue(raw json.RawMessage) error {
	var cq struct {
		Metadata meta `json:"metadata"`
		Spec     struct {
			Cohort         string `json:"cohort"`
			CohortName     string `json:"cohortName"`
			ResourceGroups []struct {
				Flavors []struct {
					Name      string `json:"name"`
					Resources []struct {
						Name           string          `json:"name"`
						NominalQuota   json.RawMessage `json:"nominalQuota"`
						BorrowingLimit json.RawMessage `json:"borrowingLimit"`
						LendingLimit   json.RawMessage `json:"lendingLimit"`
					} `json:"resources"`
				} `json:"flavors"`
			} `json:"resourceGroups"`
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
				if !contains(q.Flavors, f.Name) {
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

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// IsGPU says whether a resource name counts whole GPUs: nvidia.com/gpu,
// amd.com/gpu, gpu.intel.com/i915 and kin ("…/gpu"). A MIG resource
// (nvidia.com/mig-1g.10gb) counts slices, not GPUs: not read.
func IsGPU(resource string) bool {
	return strings.HasSuffix(resource, "/gpu") || resource == "gpu.intel.com/i915"
}

// Queues gives the queues with their spans in seconds from start, cut to
// [start, end]; a span still going ends at end.
func (b *Book) Queues(start, end time.Time) []profile.Queue {
	if b == nil {
		return nil
	}
	names := make([]string, 0, len(b.queues))
	for n := range b.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]profile.Queue, 0, len(names))
	for _, n := range names {
		q := b.queues[n]
		pq := q.q
		pq.Admitted, pq.Pending = place(q.admitted, start, end), place(q.wait, start, end)
		out = append(out, pq)
	}
	return out
}

func place(ss []span, start, end time.Time) []profile.QueueSpan {
	var out []profile.QueueSpan
	for _, s := range ss {
		to := s.end
		if to.IsZero() || to.After(end) {
			to = end
		}
		from := s.start
		if from.Before(start) {
			from = start
		}
		if to.After(from) {
			out = append(out, profile.QueueSpan{Workload: s.workload, GPUs: s.gpus, StartS: from.Sub(start).Seconds(), EndS: to.Sub(start).Seconds()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Workload < out[j].Workload || out[i].Workload == out[j].Workload && out[i].StartS < out[j].StartS
	})
	return out
}

// Apply names the queue of each pod on the nodes whose owner (the
// controller kube-state-metrics names, or the pod itself) a Workload
// admitted.
func (b *Book) Apply(nodes []profile.Node) {
	if b == nil {
		return
	}
	for ni := range nodes {
		for wi := range nodes[ni].Workloads {
			w := &nodes[ni].Workloads[wi]
			ns, pod, ok := strings.Cut(w.ID, "/")
			if !ok || w.Kind != profile.KindPod && w.Kind != "" {
				continue
			}
			if q := b.owners[ns+"/"+w.Labels[profile.ControllerLabel]]; q != "" && w.Labels[profile.ControllerLabel] != "" {
				w.Queue = q
			} else if q := b.owners[ns+"/Pod/"+pod]; q != "" {
				w.Queue = q
			}
		}
	}
}
