package queues

// KAI Scheduler: Queues (scheduling.run.ai/v2: spec.resources.gpu quota
// and limit, parentQueue; the over-quota weight, which shares what is
// above the quotas, is not read) and PodGroups
// (scheduling.run.ai/v2alpha2: their queue and the GPUs allocated to them
// now), KAI v0.20.1's types (pkg/apis/scheduling/v2/queue_types.go,
// resources.go; v2alpha2/podgroup_types.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// QueueKAI is the kind of a KAI Queue.
const QueueKAI = "kai"

type kaiQueue struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		ParentQueue string `json:"parentQueue"`
		Resources   *struct {
			GPU struct {
				Quota *float64 `json:"quota"`
				Limit *float64 `json:"limit"`
			} `json:"gpu"`
		} `json:"resources"`
	} `json:"spec"`
}

type kaiPodGroup struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		Queue string `json:"queue"`
	} `json:"spec"`
	Status struct {
		ResourcesStatus struct {
			Allocated map[string]json.RawMessage `json:"allocated"`
			Requested map[string]json.RawMessage `json:"requested"`
		} `json:"resourcesStatus"`
	} `json:"status"`
}

// readKAI lists KAI's Queues and PodGroups into b, the queues' names
// prefixed; found is false when the server does not serve them.
func (b *Book) readKAI(ctx context.Context, c *kubeapi.Client, prefix string) (found bool, err error) {
	g := group{name: "scheduling.run.ai", version: "v2", queues: "/apis/scheduling.run.ai/v2/queues", podGroups: "/apis/scheduling.run.ai/v2alpha2/podgroups", kind: "KAI",
		errAt: "scheduling.run.ai"}
	return readGroup(ctx, b, c, g, func(q *kaiQueue) { b.kaiQueue(q, prefix) }, func(pg *kaiPodGroup) { b.kaiPodGroup(pg, prefix) })
}

// kaiQueue books a Queue: its quota is its deserved GPUs
// (resources.gpu.quota; −1, unlimited, is no quota), its borrowing limit
// what its limit allows above that (−1: none); its cohort is its parent.
func (b *Book) kaiQueue(kq *kaiQueue, prefix string) {
	name := prefix + kq.Metadata.Name
	q := profile.Queue{Name: name, Kind: QueueKAI}
	if p := kq.Spec.ParentQueue; p != "" {
		q.Cohort = prefix + p
	}
	if r := kq.Spec.Resources; r != nil && r.GPU.Quota != nil && *r.GPU.Quota >= 0 {
		quota := *r.GPU.Quota
		q.NominalGPUs, q.QuotaRef = &quota, "/spec/resources/gpu/quota"
		if l := r.GPU.Limit; l != nil && *l >= 0 {
			borrow := max(0, *l-quota)
			q.BorrowingLimitGPUs = &borrow
		}
	}
	b.queues[name] = &queue{q: q}
}

// kaiPodGroup books a PodGroup: KAI keeps what it holds now, not since
// when, so a PodGroup that holds GPUs reserves them from its creation, and
// one that asks for more than it holds waits for the rest from its
// creation (docs/queues.md, KAI); its owners get its queue.
func (b *Book) kaiPodGroup(pg *kaiPodGroup, prefix string) {
	id := pg.Metadata.Namespace + "/" + pg.Metadata.Name
	held, _, err1 := gpusOf(pg.Status.ResourcesStatus.Allocated)
	asked, _, err2 := gpusOf(pg.Status.ResourcesStatus.Requested)
	if err := errors.Join(err1, err2); err != nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("KAI PodGroup %s: %v: left out", id, err))
		return
	}
	if held <= 0 && asked <= 0 {
		return
	}
	q := b.queues[prefix+pg.Spec.Queue]
	if q == nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("KAI PodGroup %s: queue %q is not a Queue: left out", id, pg.Spec.Queue))
		return
	}
	from := pg.Metadata.CreationTimestamp
	if held > 0 {
		q.admitted = append(q.admitted, span{workload: id, gpus: held, start: from})
		for _, o := range pg.Metadata.OwnerReferences {
			b.owners[pg.Metadata.Namespace+"/"+o.Kind+"/"+o.Name] = q.q.Name
		}
	}
	if asked > held {
		q.wait = append(q.wait, span{workload: id, gpus: asked - held, start: from})
	}
}
