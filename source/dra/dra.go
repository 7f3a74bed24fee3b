// Package dra reads Kubernetes Dynamic Resource Allocation from the API
// server (resource.k8s.io/v1): which ResourceClaim holds which device
// (its allocation, against the ResourceSlices that publish each device's
// node and uuid attribute) and which pods reserve it. It gives the pods of
// a profile the GPUs their claims hold, several pods of one claim sharing
// them (docs/sharing.md). What it reads is the claims as they are at the
// time of the read, not their history.
package dra

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// The API's collections.
const (
	slicesPath = "/apis/resource.k8s.io/v1/resourceslices"
	claimsPath = "/apis/resource.k8s.io/v1/resourceclaims"
)

// Claims is which pods hold which devices through claims: by node, then
// device uuid, the pods' namespace/name ids, sorted.
type Claims struct {
	byNode map[string]map[string][]string
	// Claims counts the allocated claims read, Devices the devices they
	// hold that a slice names with a node and a uuid.
	Claims, Devices int
}

// device is where a slice's device is, and its uuid attribute.
type device struct{ node, uuid string }

type slice struct {
	Spec struct {
		Driver   string `json:"driver"`
		NodeName string `json:"nodeName"`
		Pool     struct {
			Name string `json:"name"`
		} `json:"pool"`
		Devices []struct {
			Name       string `json:"name"`
			Attributes map[string]struct {
				String *string `json:"string"`
			} `json:"attributes"`
		} `json:"devices"`
	} `json:"spec"`
}

type claim struct {
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Allocation *struct {
			Devices struct {
				Results []struct {
					Driver string `json:"driver"`
					Pool   string `json:"pool"`
					Device string `json:"device"`
				} `json:"results"`
			} `json:"devices"`
		} `json:"allocation"`
		ReservedFor []struct {
			APIGroup string `json:"apiGroup"`
			Resource string `json:"resource"`
			Name     string `json:"name"`
		} `json:"reservedFor"`
	} `json:"status"`
}

// Read lists the slices and the claims.
func Read(ctx context.Context, c *kubeapi.Client) (*Claims, error) {
	devices := map[string]device{}
	err := c.List(ctx, slicesPath, func(raw json.RawMessage) error {
		var s slice
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("a ResourceSlice: %v", err)
		}
		for _, d := range s.Spec.Devices {
			if u := uuidOf(d.Attributes); u != "" && s.Spec.NodeName != "" {
				devices[key(s.Spec.Driver, s.Spec.Pool.Name, d.Name)] = device{s.Spec.NodeName, u}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &Claims{byNode: map[string]map[string][]string{}}
	err = c.List(ctx, claimsPath, func(raw json.RawMessage) error {
		var cl claim
		if err := json.Unmarshal(raw, &cl); err != nil {
			return fmt.Errorf("a ResourceClaim: %v", err)
		}
		out.add(&cl, devices)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// add records the pods that reserve an allocated claim on each device of
// its allocation that a slice names.
func (c *Claims) add(cl *claim, devices map[string]device) {
	if cl.Status.Allocation == nil {
		return
	}
	c.Claims++
	var pods []string
	for _, r := range cl.Status.ReservedFor {
		if r.APIGroup == "" && r.Resource == "pods" && r.Name != "" {
			pods = append(pods, cl.Metadata.Namespace+"/"+r.Name)
		}
	}
	for _, r := range cl.Status.Allocation.Devices.Results {
		d, ok := devices[key(r.Driver, r.Pool, r.Device)]
		if !ok {
			continue
		}
		c.Devices++
		if c.byNode[d.node] == nil {
			c.byNode[d.node] = map[string][]string{}
		}
		held := c.byNode[d.node][d.uuid]
		for _, p := range pods {
			source.AddSorted(&held, p)
		}
		c.byNode[d.node][d.uuid] = held
	}
}

func key(driver, pool, dev string) string { return driver + "\x00" + pool + "\x00" + dev }

// uuidOf is a device's uuid attribute ("uuid", or qualified
// "gpu.nvidia.com/uuid"), "" when it has none.
func uuidOf(attrs map[string]struct {
	String *string `json:"string"`
}) string {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v := attrs[k].String; v != nil && (k == "uuid" || strings.HasSuffix(k, "/uuid")) {
			return *v
		}
	}
	return ""
}

// Apply gives each pod that reserves a claim on a node's GPU that GPU
// (by index; a MIG device by its uuid too), adding the pod when the node
// does not list it (dcgm-exporter does not always label DRA's pods), with
// sharing mode dra unless the source said another. A pod added holds the
// GPU for the whole profile: the claims are read as they are now.
func (c *Claims) Apply(nodes []profile.Node) {
	if c == nil {
		return
	}
	for ni := range nodes {
		n := &nodes[ni]
		for uuid, pods := range c.byNode[n.Name] {
			gi := gpuIndex(n, uuid)
			if gi < 0 {
				continue
			}
			for _, id := range pods {
				hold(n, id, &n.GPUs[gi])
			}
		}
		sort.Slice(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	}
}

func gpuIndex(n *profile.Node, uuid string) int {
	for i, g := range n.GPUs {
		if g.UUID == uuid {
			return i
		}
	}
	return -1
}

// hold makes the pod id a holder of g on n.
func hold(n *profile.Node, id string, g *profile.GPU) {
	var w *profile.Workload
	for i := range n.Workloads {
		if n.Workloads[i].ID == id {
			w = &n.Workloads[i]
		}
	}
	if w == nil {
		ns, name, _ := strings.Cut(id, "/")
		n.Workloads = append(n.Workloads, profile.Workload{ID: id, Name: name, Kind: profile.KindPod, State: profile.StateRunning,
			Labels: map[string]string{"namespace": ns}})
		w = &n.Workloads[len(n.Workloads)-1]
	}
	source.AddSorted(&w.GPUs, g.Index)
	if g.MIG != nil {
		source.AddSorted(&w.GPUUUIDs, g.UUID)
	}
	w.GPUCount = len(w.GPUs)
	switch {
	case w.Sharing == nil:
		w.Sharing = &profile.Sharing{Mode: profile.ShareDRA}
	case w.Sharing.Mode == "":
		w.Sharing.Mode = profile.ShareDRA
	}
}
