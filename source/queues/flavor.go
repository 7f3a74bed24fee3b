package queues

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seedance/seedance/internal/kubeapi"
)

// A Kueue Workload is admitted to a ResourceFlavor per resource; the
// flavor's nodeLabels say which nodes have it (kueue v0.19.2,
// apis/kueue/v1beta2 ResourceFlavorSpec.NodeLabels: "labels that associate
// the ResourceFlavor with Nodes that have the same labels"). A Workload
// whose GPUs were reserved in a flavor that no Node has, or that is no
// ResourceFlavor at all, holds quota that no GPU of the cluster can show
// use of: each is a warning naming the Workload and the flavor (its
// reservation still counts as the queue's).

// flavorUse is an admitted Workload's GPU resource's flavor.
type flavorUse struct{ workload, flavor string }

// gpuFlavors are the flavors w's GPU resources were admitted to.
func (w *workload) gpuFlavors() []flavorUse {
	if w.Status.Admission == nil {
		return nil
	}
	var out []flavorUse
	id := w.Metadata.Namespace + "/" + w.Metadata.Name
	for _, ps := range w.Status.Admission.PodSetAssignments {
		for _, res := range slices.Sorted(maps.Keys(ps.Flavors)) {
			if u := (flavorUse{id, ps.Flavors[res]}); IsGPU(res) && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// checkFlavors warns of the uses whose flavor no Node has. The flavors
// and Nodes are listed once; a list refused (RBAC without nodes) is a
// warning that the check was not made, not an error of the read.
func (b *Book) checkFlavors(ctx context.Context, c *kubeapi.Client, base string, used []flavorUse) {
	flavors := map[string]map[string]string{}
	err := each(ctx, c, base+"/resourceflavors", "ResourceFlavor", func(f *struct {
		Metadata meta `json:"metadata"`
		Spec     struct {
			NodeLabels map[string]string `json:"nodeLabels"`
		} `json:"spec"`
	}) {
		flavors[f.Metadata.Name] = f.Spec.NodeLabels
	})
	var nodes []map[string]string
	if err == nil {
		err = each(ctx, c, "/api/v1/nodes", "Node", func(n *struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}) {
			nodes = append(nodes, n.Metadata.Labels)
		})
	}
	if err != nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Kueue's ResourceFlavors not checked against the Nodes: %v", err))
		return
	}
	for _, u := range used {
		want, ok := flavors[u.flavor]
		switch {
		case !ok:
			b.Warnings = append(b.Warnings, fmt.Sprintf("Workload %s: admitted to flavor %s, which is no ResourceFlavor: no GPU of the cluster can show its use", u.workload, u.flavor))
		case !slices.ContainsFunc(nodes, func(l map[string]string) bool { return hasLabels(l, want) }):
			b.Warnings = append(b.Warnings, fmt.Sprintf("Workload %s: admitted to ResourceFlavor %s, which no Node has (nodeLabels %s): no GPU of the cluster can show its use",
				u.workload, u.flavor, labelList(want)))
		}
	}
}

// hasLabels: every label of want is on the node, with its value.
func hasLabels(node, want map[string]string) bool {
	for k, v := range want {
		if x, ok := node[k]; !ok || x != v {
			return false
		}
	}
	return true
}

func labelList(l map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, k+"="+l[k])
	}
	return strings.Join(out, ",")
}
