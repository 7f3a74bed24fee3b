package queues

// Volcano: Queues (scheduling.volcano.sh/v1beta1: deserved, capability,
// guarantee, parent) and PodGroups (their queue, minimum resources,
// phase, and when they were scheduled), Volcano v1.15.1's types
// (staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// volcanoBase is the collection prefix of Volcano's scheduling API.
const volcanoBase = "/apis/scheduling.volcano.sh/v1beta1"

// QueueVolcano is the kind of a Volcano Queue.
const QueueVolcano = "volcano"

type volcanoQueue struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		Parent     string                     `json:"parent"`
		Deserved   map[string]json.RawMessage `json:"deserved"`
		Capability map[string]json.RawMessage `json:"capability"`
		Guarantee  struct {
			Resource map[string]json.RawMessage `json:"resource"`
		} `json:"guarantee"`
	} `json:"spec"`
}

type podGroup struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		Queue        string                     `json:"queue"`
		MinResources map[string]json.RawMessage `json:"minResources"`
	} `json:"spec"`
	Status struct {
		Phase      string     `json:"phase"`
		Conditions conditions `json:"conditions"`
	} `json:"status"`
}

// readVolcano lists Volcano's Queues and PodGroups into b, the queues'
// names prefixed; found is false when the server does not serve them.
func (b *Book) readVolcano(ctx context.Context, c *kubeapi.Client, prefix string) (found bool, err error) {
	g := group{name: "scheduling.volcano.sh", version: "v1beta1", queues: volcanoBase + "/queues", podGroups: volcanoBase + "/podgroups", kind: "Volcano",
		errAt: "scheduling.volcano.sh/v1beta1"}
	return readGroup(ctx, b, c, g, func(q *volcanoQueue) { b.volcanoQueue(q, prefix) }, func(pg *podGroup) { b.podGroup(pg, prefix) })
}

// volcanoQueue books a Queue: its quota is what it deserves (its fair
// share, which the capacity plugin lends and reclaims), its borrowing
// limit what its capability allows above that, its lending limit what
// it deserves above its guarantee; its cohort is its parent.
func (b *Book) volcanoQueue(vq *volcanoQueue, prefix string) {
	name := prefix + vq.Metadata.Name
	q := profile.Queue{Name: name, Kind: QueueVolcano}
	if p := vq.Spec.Parent; p != "" {
		q.Cohort = prefix + p
	}
	deserved, hasD, err1 := gpusOf(vq.Spec.Deserved)
	capability, hasC, err2 := gpusOf(vq.Spec.Capability)
	guarantee, hasG, err3 := gpusOf(vq.Spec.Guarantee.Resource)
	if err := errors.Join(err1, err2, err3); err != nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Volcano Queue %s: %v: its quota unknown", vq.Metadata.Name, err))
		b.queues[name] = &queue{q: q}
		return
	}
	if hasD {
		q.NominalGPUs = &deserved
		q.QuotaRef = deservedRef(vq.Spec.Deserved)
		if hasC {
			borrow := max(0, capability-deserved)
			q.BorrowingLimitGPUs = &borrow
		}
		if hasG {
			lend := max(0, deserved-guarantee)
			q.LendingLimitGPUs = &lend
		}
	}
	b.queues[name] = &queue{q: q}
}

// podGroup books a PodGroup: its wait from its creation until it was
// scheduled (or still, while pending), its reservation from then while
// it runs or is in the queue; a completed one's end is not kept by
// Volcano, so it is left out. Its owners get its queue.
func (b *Book) podGroup(pg *podGroup, prefix string) {
	id := pg.Metadata.Namespace + "/" + pg.Metadata.Name
	gpus, ok, err := gpusOf(pg.Spec.MinResources)
	if err != nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Volcano PodGroup %s: %v: left out", id, err))
		return
	}
	if !ok || gpus <= 0 || pg.Status.Phase == "Completed" {
		return
	}
	q := b.queues[prefix+pg.Spec.Queue]
	if q == nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Volcano PodGroup %s: queue %q is not a Queue: left out", id, pg.Spec.Queue))
		return
	}
	scheduled := pg.Status.Conditions.trueSince("Scheduled")
	running := pg.Status.Phase == "Running" || pg.Status.Phase == "Inqueue"
	if scheduled.IsZero() && running {
		scheduled = pg.Metadata.CreationTimestamp // admitted, its time not kept
	}
	q.wait = append(q.wait, span{workload: id, gpus: gpus, start: pg.Metadata.CreationTimestamp, end: scheduled})
	if running {
		q.admitted = append(q.admitted, span{workload: id, gpus: gpus, start: scheduled})
		for _, o := range pg.Metadata.OwnerReferences {
			b.owners[pg.Metadata.Namespace+"/"+o.Kind+"/"+o.Name] = q.q.Name
		}
	}
}

// deservedRef is the JSON pointer of a Queue's deserved GPUs, for a
// patch: "" when more than one resource holds them.
func deservedRef(rl map[string]json.RawMessage) string {
	ref := ""
	for name := range rl {
		if IsGPU(name) {
			if ref != "" {
				return ""
			}
			ref = "/spec/deserved/" + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
		}
	}
	return ref
}
