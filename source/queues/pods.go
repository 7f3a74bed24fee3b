package queues

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// A Workload admitted for a Job is owned by the Job, and the Job's pods
// by the Job: a pod gets the Workload's queue through its controller.
// kube-state-metrics' kube_pod_owner gives it to pods read from Prometheus
// (profile.ControllerLabel); without it the pods' own ownerReferences are
// read from the API server, in the namespaces where an admitted Workload
// is owned by something other than a Pod. A pod deleted before the read
// is not found there.

// readPodOwners keeps the controller (Kind/Name) of each pod of those
// namespaces. A list refused (RBAC without pods) is a warning, not an
// error of the read.
func (b *Book) readPodOwners(ctx context.Context, c *kubeapi.Client) {
	nss := map[string]bool{}
	for key := range b.owners {
		if ns, rest, _ := strings.Cut(key, "/"); !strings.HasPrefix(rest, "Pod/") {
			nss[ns] = true
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(nss)) {
		err := each(ctx, c, "/api/v1/namespaces/"+ns+"/pods", "Pod", func(p *struct {
			Metadata struct {
				Name            string `json:"name"`
				OwnerReferences []struct {
					Kind       string `json:"kind"`
					Name       string `json:"name"`
					Controller bool   `json:"controller"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		}) {
			for _, o := range p.Metadata.OwnerReferences {
				if o.Controller {
					b.podOwner[ns+"/"+p.Metadata.Name] = o.Kind + "/" + o.Name
				}
			}
		})
		if err != nil {
			b.Warnings = append(b.Warnings, fmt.Sprintf("the pods of namespace %s not read (their queues come from kube-state-metrics' owners only): %v", ns, err))
		}
	}
}

// controller is the workload's pod's controller as Kind/Name: the
// source's (kube-state-metrics'), else the API server's; "" when neither
// knows it.
func (b *Book) controller(w *profile.Workload) string {
	if c := w.Labels[profile.ControllerLabel]; c != "" {
		return c
	}
	return b.podOwner[w.ID]
}
