// Package dcgmtest writes profiles as dcgm-exporter and kube-state-metrics
// series, for the tests and benchmarks that fill a real Prometheus or serve
// a fake exporter. It is a test fixture: no command uses it.
package dcgmtest

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/seedance/seedance/source/dcgm"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// exportNames is the dcgm-exporter metric each column is written as: the
// first choice of DCGMMetrics, except memory bandwidth, written as
// MEM_COPY_UTIL (a percentage) so that values round-trip exactly.
var exportNames = map[profile.Metric]string{
	profile.GPUUtilPct: "DCGM_FI_DEV_GPU_UTIL", profile.MemBWUtilPct: "DCGM_FI_DEV_MEM_COPY_UTIL", profile.SMActivePct: "DCGM_FI_PROF_SM_ACTIVE",
	profile.MemUsedBytes: "DCGM_FI_DEV_FB_USED", profile.PCIeTxBytesPerS: "DCGM_FI_PROF_PCIE_TX_BYTES", profile.PCIeRxBytesPerS: "DCGM_FI_PROF_PCIE_RX_BYTES",
	profile.NVLinkTxBytesPerS: "DCGM_FI_PROF_NVLINK_TX_BYTES", profile.NVLinkRxBytesPerS: "DCGM_FI_PROF_NVLINK_RX_BYTES", profile.PowerW: "DCGM_FI_DEV_POWER_USAGE",
	profile.EnergyJ: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", profile.SMClockMHz: "DCGM_FI_DEV_SM_CLOCK", profile.TempC: "DCGM_FI_DEV_GPU_TEMP",
	profile.ClockEventReasons: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
}

// MetricNames lists the dcgm-exporter metrics the profiles are written as,
// sorted.
func MetricNames() []string {
	out := make([]string, 0, len(exportNames))
	for _, n := range exportNames {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// WriteOpenMetrics writes a profile as the series dcgm-exporter (with
// Kubernetes pod mapping) and kube-state-metrics would have produced, in the
// OpenMetrics text format with timestamps, as `promtool tsdb
// create-blocks-from openmetrics` reads it. seedance's tests and benchmarks
// fill a real Prometheus with it.
func WriteOpenMetrics(w io.Writer, p *profile.Profile) error {
	return WriteOpenMetricsLayout(w, p, LayoutDirect)
}

// Label layouts of dcgm-exporter series in Prometheus.
const (
	// LayoutDirect: the workload's pod labels as dcgm-exporter writes them
	// (a direct scrape, or honor_labels).
	LayoutDirect = "direct"
	// LayoutKubePrometheus: scraped through a ServiceMonitor as
	// kube-prometheus does; every series carries the exporter pod's own
	// target labels, and the workload's collide into exported_*.
	LayoutKubePrometheus = "kube-prometheus"
)

// WriteOpenMetricsLayout is WriteOpenMetrics with a label layout.
func WriteOpenMetricsLayout(w io.Writer, p *profile.Profile, layout string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	start := float64(p.StartedAt.UnixMilli()) / 1e3
	metrics := make([]profile.Metric, 0, profile.NumMetrics)
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		metrics = append(metrics, m)
	}
	sort.Slice(metrics, func(i, j int) bool { return exportNames[metrics[i]] < exportNames[metrics[j]] })
	for _, m := range metrics {
		name := exportNames[m]
		scale := 1.0
		if d, ok := dcgm.MetricByName(name); ok {
			scale = d.Scale
		}
		fmt.Fprintf(bw, "# TYPE %s gauge\n", name)
		for _, n := range p.Nodes {
			for gi := range n.GPUs {
				g := &n.GPUs[gi]
				col := *g.Series.Col(m)
				if col == nil {
					continue
				}
				for i, v := range col {
					if profile.IsNull(v) {
						continue
					}
					fmt.Fprintf(bw, "%s{%s} %s %s\n", name, dcgmLabels(&n, g, layout, g.Series.T[i]), strconv.FormatFloat(v/scale, 'g', -1, 64),
						strconv.FormatFloat(start+g.Series.T[i], 'f', 3, 64))
				}
			}
		}
	}
	writeKubeState(bw, p, start)
	writePodLabels(bw, p, start)
	writeNodeCost(bw, p, start)
	writeWork(bw, p, start)
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

// dcgmLabels are the labels of a GPU's series at t: the GPU's, and the pod
// that held it then (its intervals, or always when it has none).
func dcgmLabels(n *profile.Node, g *profile.GPU, layout string, t float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, `gpu="%d",UUID=%q,pci_bus_id=%q,device="nvidia%d",modelName=%q,Hostname=%q`,
		g.Index, g.UUID, "0000"+g.PCIBusID, g.Index, g.Model, n.Name)
	prefix := ""
	if layout == LayoutKubePrometheus {
		// The exporter pod of this node, as the ServiceMonitor's target.
		fmt.Fprintf(&b, `,job="nvidia-dcgm-exporter",endpoint="gpu-metrics",service="nvidia-dcgm-exporter",namespace="gpu-operator",pod="nvidia-dcgm-exporter-%s",container="nvidia-dcgm-exporter",instance="%s:9400"`,
			n.Name, n.Name)
		prefix = "exported_"
	}
	for _, w := range n.Workloads {
		if w.Kind != profile.KindPod || w.State != profile.StateRunning || !held(w.Intervals, t) {
			continue
		}
		for _, i := range w.GPUs {
			if i == g.Index {
				fmt.Fprintf(&b, `,%snamespace=%q,%spod=%q,%scontainer="main"`, prefix, w.Labels["namespace"], prefix, w.Name, prefix)
				return b.String()
			}
		}
	}
	return b.String()
}

// held says whether intervals (none: always) hold t.
func held(ivs []profile.Tenure, t float64) bool {
	for _, iv := range ivs {
		if iv.StartS <= t && t < iv.EndS {
			return true
		}
	}
	return ivs == nil
}

// CostCenter is the cost_center label the fixture's kube_namespace_labels
// give a namespace.
func CostCenter(namespace string) string { return "cc-" + namespace }

// Team is the team label the fixture's kube_pod_labels give a pod, from
// its name: training, serving, or the platform team for the rest.
func Team(pod string) string {
	switch {
	case strings.Contains(pod, "train"):
		return "research"
	case strings.Contains(pod, "infer"):
		return "serving"
	}
	return "platform"
}

// writePodLabels writes kube_pod_labels for every pod, running or
// pending, with a label_team (Team) as kube-state-metrics exports labels.
// (At the start and in the middle of the profile: an engine whose range
// selectors leave out their left edge still sees one.)
func writePodLabels(bw *bufio.Writer, p *profile.Profile, start float64) {
	fmt.Fprintf(bw, "# TYPE kube_pod_labels gauge\n")
	mid := start + p.EndedAt.Sub(p.StartedAt).Seconds()/2
	for _, n := range p.Nodes {
		for _, w := range n.Workloads {
			if w.Kind == profile.KindPod {
				for _, t := range []float64{start, mid} {
					fmt.Fprintf(bw, "kube_pod_labels{namespace=%q,pod=%q,label_team=%q} 1 %.3f\n", w.Labels["namespace"], w.Name, Team(w.Name), t)
				}
			}
		}
	}
	// kube_namespace_labels, with a label_cost_center (CostCenter).
	fmt.Fprintf(bw, "# TYPE kube_namespace_labels gauge\n")
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		for _, w := range n.Workloads {
			if ns := w.Labels["namespace"]; w.Kind == profile.KindPod && !seen[ns] {
				seen[ns] = true
				for _, t := range []float64{start, mid} {
					fmt.Fprintf(bw, "kube_namespace_labels{namespace=%q,label_cost_center=%q} 1 %.3f\n", ns, CostCenter(ns), t)
				}
			}
		}
	}
	// kube_pod_owner: the workload's controller label when it has one (a
	// Deployment's pod "app-<hash>-<suffix>" is owned by its ReplicaSet
	// "app-<hash>"); without one, a ReplicaSet named as above.
	fmt.Fprintf(bw, "# TYPE kube_pod_owner gauge\n")
	for _, n := range p.Nodes {
		for _, w := range n.Workloads {
			kind, name := "ReplicaSet", ""
			if i := strings.LastIndexByte(w.Name, '-'); i > 0 {
				name = w.Name[:i]
			}
			if c, ok := w.Labels[profile.ControllerLabel]; ok {
				k, nm, _ := strings.Cut(c, "/")
				if k != "Deployment" {
					kind, name = k, nm
				}
			}
			if w.Kind != profile.KindPod || name == "" {
				continue
			}
			for _, t := range []float64{start, mid} {
				fmt.Fprintf(bw, "kube_pod_owner{namespace=%q,pod=%q,owner_kind=%q,owner_name=%q,owner_is_controller=\"true\"} 1 %.3f\n",
					w.Labels["namespace"], w.Name, kind, name, t)
			}
		}
	}
}

// writeKubeState writes the kube-state-metrics series of pending pods,
// and kube_pod_info of every pod, as kube-state-metrics does: the running
// GPU pods and each node's dcgm-exporter pod.
// writeNodeCost writes OpenCost's node_gpu_hourly_cost, every interval,
// for the nodes whose label pricing.NodeCostLabel gives one.
func writeNodeCost(bw *bufio.Writer, p *profile.Profile, start float64) {
	header := false
	for _, n := range p.Nodes {
		v, ok := n.Labels[pricing.NodeCostLabel]
		if !ok {
			continue
		}
		if !header {
			fmt.Fprintf(bw, "# TYPE node_gpu_hourly_cost gauge\n")
			header = true
		}
		for t := 0.0; t < p.EndedAt.Sub(p.StartedAt).Seconds(); t += p.IntervalS {
			fmt.Fprintf(bw, "node_gpu_hourly_cost{node=%q,instance_type=\"spot\"} %s %.3f\n", n.Name, v, start+t)
		}
	}
}

func writeKubeState(bw *bufio.Writer, p *profile.Profile, start float64) {
	type pod struct {
		ns, name, node string
		gpus           int
	}
	var pods, running []pod
	for _, n := range p.Nodes {
		running = append(running, pod{"gpu-operator", "nvidia-dcgm-exporter-" + n.Name, n.Name, 0})
		for _, w := range n.Workloads {
			switch {
			case w.State == profile.StatePending && w.Kind == profile.KindPod:
				pods = append(pods, pod{w.Labels["namespace"], w.Name, n.Name, w.GPUCount})
			case w.Kind == profile.KindPod:
				running = append(running, pod{w.Labels["namespace"], w.Name, n.Name, w.GPUCount})
			}
		}
	}
	end := start + p.EndedAt.Sub(p.StartedAt).Seconds()
	times := []float64{start, (start + end) / 2}
	fmt.Fprintf(bw, "# TYPE kube_pod_info gauge\n")
	for _, q := range append(running, pods...) {
		for _, t := range times {
			fmt.Fprintf(bw, "kube_pod_info{namespace=%q,pod=%q,node=%q} 1 %.3f\n", q.ns, q.name, q.node, t)
		}
	}
	if len(pods) == 0 {
		return
	}
	families := []struct {
		name  string
		value func(pod) string
		extra func(pod) string
	}{
		{"kube_pod_container_resource_requests", func(q pod) string { return strconv.Itoa(q.gpus) },
			func(q pod) string { return `,container="main",resource="nvidia_com_gpu",unit="integer"` }},
		{"kube_pod_status_phase", func(pod) string { return "1" }, func(pod) string { return `,phase="Pending"` }},
	}
	for _, f := range families {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", f.name)
		for _, q := range pods {
			for _, t := range times {
				fmt.Fprintf(bw, "%s{namespace=%q,pod=%q%s} %s %.3f\n", f.name, q.ns, q.name, f.extra(q), f.value(q), t)
			}
		}
	}
}

// vllmNames are the vLLM counters (v1 engine, docs/design/metrics.md) that
// writeWork writes a unit's readings as, and the labels it adds.
var vllmNames = map[string]struct{ metric, extra string }{
	profile.UnitRequests:     {"vllm:request_success_total", `finished_reason="stop",`},
	profile.UnitInputTokens:  {"vllm:prompt_tokens_total", ""},
	profile.UnitOutputTokens: {"vllm:generation_tokens_total", ""},
}

// writeWork writes the pods' work counters as a vLLM server's series,
// with the namespace and pod labels Prometheus' Kubernetes discovery adds
// (docs/units.md); units vLLM has no counter of are left out.
func writeWork(bw *bufio.Writer, p *profile.Profile, start float64) {
	for _, unit := range []string{profile.UnitInputTokens, profile.UnitOutputTokens, profile.UnitRequests} {
		v := vllmNames[unit]
		fmt.Fprintf(bw, "# TYPE %s counter\n", strings.TrimSuffix(v.metric, "_total"))
		for _, n := range p.Nodes {
			for _, w := range n.Workloads {
				for _, c := range w.Work {
					if c.Unit != unit || w.Kind != profile.KindPod {
						continue
					}
					for i, t := range c.T {
						if !profile.IsNull(c.V[i]) {
							fmt.Fprintf(bw, "%s{%smodel_name=%q,namespace=%q,pod=%q} %s %.3f\n", v.metric, v.extra, c.Model, w.Labels["namespace"], w.Name,
								strconv.FormatFloat(c.V[i], 'f', -1, 64), start+t)
						}
					}
				}
			}
		}
	}
}
