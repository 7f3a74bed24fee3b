package prometheus

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/dra"
	"github.com/seedance/seedance/source/queues"
)

// kubeQueries is how many queries readKube runs.
const kubeQueries = 7 + shareQueries

// kube is what kube-state-metrics says of the range: the pods that were
// Pending and asked for GPUs, with the node each was placed on, and the
// labels of pods and namespaces. It is read once and given to each batch
// of nodes.
type kube struct {
	pending             []pendingPod
	podLabels, nsLabels map[string]map[string]string
	// nodeCost is OpenCost's node_gpu_hourly_cost, the latest in the
	// range, by node.
	nodeCost                    map[string]float64
	pendingErr, labErr, costErr error
	// noPodInfo: no kube_pod_info series matched in the range, so
	// kube-state-metrics is not there (or the selector drops it).
	noPodInfo bool
	// shared is what the cluster says of shared GPUs; useNotes what
	// could not be measured of them.
	shared   *sharing
	useNotes []string
	// claims is DRA's, when the API server is read (nil: not).
	claims *dra.Claims
	// queues is Kueue's, when the API server is read and serves it;
	// kueue what Kueue's metrics say when it is not read.
	queues *queues.Book
	kueue  kueueMetrics
	// work is the serving counters by pod id (readWork); workUsed the
	// pods that got theirs.
	work     map[string][]profile.Work
	workUsed map[string]bool
	workErr  error
}

type pendingPod struct {
	id, name, namespace, node string
	gpus                      int
}

// readKube reads kube-state-metrics over [start, end] (the read's range
// with its context), and OpenCost's prices over the window win alone (the
// window's own prices). It is an enrichment: what fails is said in the
// notes, not fatal.
func readKube(ctx context.Context, c *promClient, matchers string, start, end time.Time, win timeRange, tick func()) *kube {
	k := &kube{}
	k.pendingErr = k.readPending(ctx, c, matchers, start, end, tick)
	k.labErr = k.readLabels(ctx, c, matchers, start, end, tick)
	k.costErr = k.readNodeCost(ctx, c, matchers, win.Start, win.End, tick)
	k.shared = readSharing(ctx, c, matchers, start, end, tick)
	return k
}

// readNodeCost reads OpenCost's price of a GPU-hour on each node
// (node_gpu_hourly_cost, the latest in the range): each node's own price,
// spot, on-demand or reserved (docs/pricing.md). Without OpenCost there is
// none, and the prices are the user's or the built-in table's. The range
// is [start, end): asked at end − 1 ms over end − start, since a range
// selector holds the sample at its right edge, which is the next range's
// first (a price that changes at 10:00:00 would price 09:00–10:00).
func (k *kube) readNodeCost(ctx context.Context, c *promClient, matchers string, start, end time.Time, tick func()) error {
	q := fmt.Sprintf("max by (node) (last_over_time(node_gpu_hourly_cost{%s}[%dms]))", matchers, end.Sub(start).Milliseconds())
	ans, err := c.query(ctx, q, end.Add(-time.Millisecond))
	tick()
	if err != nil {
		return err
	}
	k.nodeCost = map[string]float64{}
	for _, s := range ans.Series {
		if n := s.Labels["node"]; n != "" && len(s.Pairs) > 0 {
			if v := s.Pairs[len(s.Pairs)-1].V; v >= 0 && v <= 1e6 {
				k.nodeCost[n] = v
			}
		}
	}
	return nil
}

// readPending reads the pods that were Pending in the window and request
// GPUs, and the node kube_pod_info places each on.
func (k *kube) readPending(ctx context.Context, c *promClient, matchers string, start, end time.Time, tick func()) error {
	w := fmt.Sprintf("%dms", end.Sub(start).Milliseconds())
	sel := func(metric, extra string) string {
		m := extra
		if matchers != "" {
			m = strings.TrimSuffix(matchers+","+extra, ",")
		}
		return fmt.Sprintf("%s{%s}[%s]", metric, m, w)
	}
	queries := []string{
		fmt.Sprintf("max by (namespace, pod) (max_over_time(%s)) == 1", sel("kube_pod_status_phase", `phase="Pending"`)),
		fmt.Sprintf("sum by (namespace, pod) (max_over_time(%s))", sel("kube_pod_container_resource_requests", `resource=~"nvidia_com_gpu|nvidia_com_gpu_shared"`)),
		fmt.Sprintf("max by (namespace, pod, node) (max_over_time(%s))", sel("kube_pod_info", "")),
	}
	var vecs [3][]promSeries
	for i, q := range queries {
		ans, err := c.query(ctx, q, end)
		tick()
		if err != nil {
			return err
		}
		vecs[i] = ans.Series
	}
	k.noPodInfo = len(vecs[2]) == 0
	key := func(s promSeries) string { return s.Labels["namespace"] + "/" + s.Labels["pod"] }
	value := func(s promSeries) float64 {
		if len(s.Pairs) == 0 {
			return 0
		}
		return s.Pairs[len(s.Pairs)-1].V
	}
	gpus := map[string]float64{}
	for _, s := range vecs[1] {
		gpus[key(s)] = value(s)
	}
	nodeOf := map[string]string{}
	for _, s := range vecs[2] {
		if n := s.Labels["node"]; n != "" {
			nodeOf[key(s)] = n
		}
	}
	for _, s := range vecs[0] {
		if id := key(s); gpus[id] > 0 {
			k.pending = append(k.pending, pendingPod{id: id, name: s.Labels["pod"], namespace: s.Labels["namespace"], node: nodeOf[id], gpus: int(gpus[id] + 0.5)})
		}
	}
	sort.Slice(k.pending, func(i, j int) bool { return k.pending[i].id < k.pending[j].id })
	return nil
}

// readLabels reads the labels kube-state-metrics exports for pods
// (kube_pod_labels: label_team="ml-research" becomes the workload label
// team) and namespaces (kube_namespace_labels), the last seen in the
// range, and each pod's controller (kube_pod_owner). Names and values past
// a Kubernetes label's length are left out.
func (k *kube) readLabels(ctx context.Context, c *promClient, matchers string, start, end time.Time, tick func()) error {
	q := fmt.Sprintf("last_over_time(kube_pod_labels{%s}[%dms])", matchers, end.Sub(start).Milliseconds())
	var answers [3]*promAnswer
	for i, metric := range []string{"kube_pod_labels", "kube_pod_owner", "kube_namespace_labels"} {
		ans, err := c.query(ctx, strings.Replace(q, "kube_pod_labels", metric, 1), end)
		tick()
		if err != nil {
			return err
		}
		answers[i] = ans
	}
	k.podLabels, k.nsLabels = map[string]map[string]string{}, map[string]map[string]string{}
	for _, s := range answers[1].Series {
		if c := controllerOf(s.Labels["owner_kind"], s.Labels["owner_name"]); c != "" && len(c) <= profile.MaxNameBytes {
			k.podLabels[s.Labels["namespace"]+"/"+s.Labels["pod"]] = map[string]string{profile.ControllerLabel: c}
		}
	}
	for _, s := range answers[0].Series {
		addLabels(k.podLabels, s.Labels["namespace"]+"/"+s.Labels["pod"], s.Labels)
	}
	for _, s := range answers[2].Series {
		addLabels(k.nsLabels, s.Labels["namespace"], s.Labels)
	}
	return nil
}

// addLabels adds a kube-state-metrics series' label_* labels to to[k].
func addLabels(to map[string]map[string]string, k string, series map[string]string) {
	for name, v := range series {
		key, ok := strings.CutPrefix(name, "label_")
		if !ok || key == "" || len(key) > profile.MaxNameBytes || len(v) > profile.MaxNameBytes {
			continue
		}
		if to[k] == nil {
			to[k] = map[string]string{}
		}
		to[k][key] = v
	}
}

// apply adds to the nodes the pending pods placed on them (unless they ran
// in the range) and gives their pods their labels: a pod's own, then its
// namespace's that it lacks; a label the workload has already keeps its
// value.
func (k *kube) apply(nodes []profile.Node, running map[string]bool) {
	byName := map[string]*profile.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	for _, pp := range k.pending {
		n := byName[pp.node]
		if n == nil || running[pp.id] {
			continue
		}
		n.Workloads = append(n.Workloads, profile.Workload{ID: pp.id, Name: pp.name, Kind: profile.KindPod, State: profile.StatePending,
			GPUCount: pp.gpus, Labels: map[string]string{"namespace": pp.namespace}})
		sort.Slice(n.Workloads, func(i, j int) bool { return n.Workloads[i].ID < n.Workloads[j].ID })
	}
	k.shared.apply(nodes)
	for ni := range nodes {
		if v, ok := k.nodeCost[nodes[ni].Name]; ok {
			if nodes[ni].Labels == nil {
				nodes[ni].Labels = map[string]string{}
			}
			nodes[ni].Labels[pricing.NodeCostLabel] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		for wi := range nodes[ni].Workloads {
			w := &nodes[ni].Workloads[wi]
			if w.Kind != profile.KindPod {
				continue
			}
			k.applyWork(w)
			for _, from := range []map[string]string{k.podLabels[w.ID], k.nsLabels[w.Labels["namespace"]]} {
				for key, v := range from {
					if _, set := w.Labels[key]; !set {
						if w.Labels == nil {
							w.Labels = map[string]string{}
						}
						w.Labels[key] = v
					}
				}
			}
		}
	}
}

// notes says what kube-state-metrics could not tell: the pending GPU pods
// placed on no node of the read, and what failed.
// unknown says why the pending pods are unknown, "" when they are known:
// no kube-state-metrics series matched (a selector on dcgm-exporter's own
// labels drops them), or the query failed.
func (k *kube) unknown(selector string) string {
	switch {
	case k.pendingErr != nil:
		return "pending pods unknown: " + k.pendingErr.Error()
	case k.noPodInfo && selector != "":
		return fmt.Sprintf("no kube-state-metrics series (kube_pod_info) match %s in the range, so pending pods, pod labels and owners are unknown: select on a label that kube-state-metrics' series share (cluster=...), not dcgm-exporter's job", selector)
	case k.noPodInfo:
		return "no kube-state-metrics series (kube_pod_info) in the range, so pending pods, pod labels and owners are unknown: scrape kube-state-metrics in this Prometheus, or pass --slurm on a Slurm cluster"
	}
	return ""
}

// unscheduled is the pending GPU pods on no node of the profile: demand
// that counts against the idle capacity that could run it.
func (k *kube) unscheduled(d *discovery) []profile.Workload {
	var out []profile.Workload
	for _, pp := range k.pending {
		if d.nodes[pp.node] == nil && !d.running[pp.id] {
			out = append(out, profile.Workload{ID: pp.id, Name: pp.name, Kind: profile.KindPod, State: profile.StatePending,
				GPUCount: pp.gpus, Labels: map[string]string{"namespace": pp.namespace}})
		}
	}
	return out
}

func (k *kube) notes(d *discovery) []string {
	out := k.workNotes()
	var unscheduled []string
	for _, pp := range k.pending {
		if d.nodes[pp.node] == nil && !d.running[pp.id] {
			unscheduled = append(unscheduled, pp.id)
		}
	}
	if len(unscheduled) > 0 {
		out = append(out, fmt.Sprintf("%d pending GPU pod(s) not scheduled on any node: %s", len(unscheduled), strings.Join(unscheduled, ", ")))
	}
	if k.costErr != nil {
		out = append(out, "OpenCost's node prices unknown (priced by GPU model): "+k.costErr.Error())
	}
	if k.labErr != nil {
		out = append(out, "pod labels unknown: "+k.labErr.Error())
	}
	if k.shared.err != nil {
		out = append(out, "GPU sharing requests unknown (shared GPUs split evenly): "+k.shared.err.Error())
	}
	out = append(out, k.shared.bad.notes()...)
	return append(out, dedupe(k.useNotes)...)
}
