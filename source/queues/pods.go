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
// (profile.ControllerLabel); without it, or when that controller is not
// the owner a Workload or PodGroup names (a JobSet's pods are owned by its
// Jobs, a Deployment's by its ReplicaSets), the controllers are read from
// the API server, in the namespaces where an admitted Workload or a
// PodGroup is owned by something other than a Pod: each pod's, and each
// Job's and ReplicaSet's, walked up from the pod to the first that names
// a queue (at most three steps). A pod deleted before the read is not
// found there.

// maxOwnerSteps bounds the walk from a pod up its controllers.
const maxOwnerSteps = 3

// ownerRef is what the walk reads of a pod, Job or ReplicaSet.
type ownerRef struct {
	Metadata meta `json:"metadata"`
}

// controllerOf is the object's controller as Kind/Name, "" when none.
func (o *ownerRef) controllerOf() string {
	for _, r := range o.Metadata.OwnerReferences {
		if r.Controller {
			return r.Kind + "/" + r.Name
		}
	}
	return ""
}

// readPodOwners keeps, for each pod of those namespaces, the controller
// its queue comes through. A list refused (RBAC without pods, jobs or
// replicasets) is a warning, not an error of the read.
func (b *Book) readPodOwners(ctx context.Context, c *kubeapi.Client) {
	nss := map[string]bool{}
	for key := range b.owners {
		if ns, rest, _ := strings.Cut(key, "/"); !strings.HasPrefix(rest, "Pod/") {
			nss[ns] = true
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(nss)) {
		pods, up := map[string]string{}, map[string]string{}
		for _, l := range []struct{ path, kind string }{{"/api/v1/namespaces/" + ns + "/pods", "Pod"},
			{"/apis/batch/v1/namespaces/" + ns + "/jobs", "Job"}, {"/apis/apps/v1/namespaces/" + ns + "/replicasets", "ReplicaSet"}} {
			err := each(ctx, c, l.path, l.kind, func(o *ownerRef) {
				if l.kind == "Pod" {
					pods[o.Metadata.Name] = o.controllerOf()
				} else {
					up[l.kind+"/"+o.Metadata.Name] = o.controllerOf()
				}
			})
			if err != nil {
				b.Warnings = append(b.Warnings, fmt.Sprintf("the %ss of namespace %s not read (their pods' queues come from kube-state-metrics' owners, or their own controller): %v", strings.ToLower(l.kind), ns, err))
			}
		}
		for pod, ctl := range pods {
			b.podOwner[ns+"/"+pod] = b.queuedOwner(ns, ctl, up)
		}
	}
}

// queuedOwner walks up from ctl through the controllers in up to the
// first that names a queue; ctl itself when none does.
func (b *Book) queuedOwner(ns, ctl string, up map[string]string) string {
	for cur, i := ctl, 0; cur != "" && i < maxOwnerSteps; cur, i = up[cur], i+1 {
		if b.owners[ns+"/"+cur] != "" {
			return cur
		}
	}
	return ctl
}

// queueOf is the queue of the pod w (namespace ns) through its
// controller: the source's (kube-state-metrics'), else the one the API
// server's controllers lead to; "" when neither names a queue.
func (b *Book) queueOf(ns string, w *profile.Workload) string {
	for _, ctl := range []string{w.Labels[profile.ControllerLabel], b.podOwner[w.ID]} {
		if q := b.owners[ns+"/"+ctl]; ctl != "" && q != "" {
			return q
		}
	}
	return ""
}
