package dcgmtest

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// SharedCluster writes, as a kube-prometheus cluster exports them, the
// series of one GPU in each sharing mode (docs/sharing.md), sampled every
// 60 s for 600 s from start: dcgm-exporter's (the workload in exported_*
// labels, one series per pod on a shared GPU), kube-state-metrics'
// (kube_pod_info, kube_pod_labels, the requests, kube_node_labels with GPU
// feature discovery's sharing strategy) and HAMi's (its scheduler's
// vGPUCoreAllocated, its monitor's Device_utilization_desc_of_container,
// read 5 s after dcgm-exporter's samples).
//
//   - node-a GPU 0, time-sliced (strategy time-slicing, nvidia.com/gpu.shared
//     asked): pods ml/ts-a and ml/ts-b; 40 % for 300 s, then idle.
//   - node-a GPU 1, HAMi: ml/hami-c asked 60 % of the cores and 40 GiB,
//     ml/hami-d 20 % and 20 GiB; 40 % for 300 s (c measured at 30 %, d at
//     10 %), then idle (both at 0).
//   - node-b GPU 0 in MIG mode: GI 1 (3g.40gb) runs ml/mig-e at 50 %; GI 2
//     (4g.40gb) runs nothing at 0 %.
//
// Every GPU has 80 GiB (FB_USED + FB_FREE).
func SharedCluster(w io.Writer, start time.Time) error {
	bw := bufio.NewWriter(w)
	t0 := float64(start.UnixMilli()) / 1000
	at := func(i int) float64 { return t0 + 60*float64(i) }
	busy := func(i int, v float64) float64 {
		if i < 5 {
			return v
		}
		return 0
	}
	const exporter = `job="nvidia-dcgm-exporter",namespace="gpu-operator",pod="nvidia-dcgm-exporter-x1",container="nvidia-dcgm-exporter"`
	type series struct {
		node, uuid, gpu, mig, pod string
		util                      func(i int) float64
	}
	gpus := []series{
		{"node-a", "GPU-a0", "0", "", "ts-a", func(i int) float64 { return busy(i, 40) }},
		{"node-a", "GPU-a0", "0", "", "ts-b", func(i int) float64 { return busy(i, 40) }},
		{"node-a", "GPU-a1", "1", "", "hami-c", func(i int) float64 { return busy(i, 40) }},
		{"node-a", "GPU-a1", "1", "", "hami-d", func(i int) float64 { return busy(i, 40) }},
		{"node-b", "GPU-b0", "0", `GPU_I_ID="1",GPU_I_PROFILE="3g.40gb"`, "mig-e", func(int) float64 { return 50 }},
		{"node-b", "GPU-b0", "0", `GPU_I_ID="2",GPU_I_PROFILE="4g.40gb"`, "", func(int) float64 { return 0 }},
	}
	for _, m := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"} {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", m)
		for _, g := range gpus {
			labels := fmt.Sprintf(`gpu=%q,UUID=%q,modelName="NVIDIA H100 80GB HBM3",Hostname=%q,%s`, g.gpu, g.uuid, g.node, exporter)
			if g.mig != "" {
				labels += "," + g.mig
			}
			if g.pod != "" {
				labels += fmt.Sprintf(`,exported_namespace="ml",exported_pod=%q,exported_container="main"`, g.pod)
			}
			for i := 0; i < 10; i++ {
				v := g.util(i)
				switch m {
				case "DCGM_FI_DEV_FB_USED":
					v = 1024
				case "DCGM_FI_DEV_FB_FREE":
					v = 80*1024 - 1024
				}
				fmt.Fprintf(bw, "%s{%s} %g %.3f\n", m, labels, v, at(i))
			}
		}
	}
	pods := map[string]string{"ts-a": "node-a", "ts-b": "node-a", "hami-c": "node-a", "hami-d": "node-a", "mig-e": "node-b"}
	gauge := func(name string, lines ...string) {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", name)
		for _, l := range lines {
			for i := 0; i < 10; i++ {
				fmt.Fprintf(bw, "%s %.3f\n", l, at(i))
			}
		}
	}
	var info, labels []string
	for _, pod := range []string{"hami-c", "hami-d", "mig-e", "ts-a", "ts-b"} {
		info = append(info, fmt.Sprintf(`kube_pod_info{namespace="ml",pod=%q,node=%q} 1`, pod, pods[pod]))
		labels = append(labels, fmt.Sprintf(`kube_pod_labels{namespace="ml",pod=%q,label_team="team-%s"} 1`, pod, pod))
	}
	gauge("kube_pod_info", info...)
	gauge("kube_pod_labels", labels...)
	req := func(pod, resource string, v float64) string {
		return fmt.Sprintf(`kube_pod_container_resource_requests{namespace="ml",pod=%q,container="main",resource=%q,unit="integer"} %g`, pod, resource, v)
	}
	gauge("kube_pod_container_resource_requests",
		req("ts-a", "nvidia_com_gpu_shared", 1), req("ts-b", "nvidia_com_gpu_shared", 1),
		req("hami-c", "nvidia_com_gpu", 1), req("hami-c", "nvidia_com_gpucores", 60), req("hami-c", "nvidia_com_gpumem", 40960),
		req("hami-d", "nvidia_com_gpu", 1), req("hami-d", "nvidia_com_gpucores", 20), req("hami-d", "nvidia_com_gpumem", 20480),
		req("mig-e", "nvidia_com_mig_3g_40gb", 1))
	gauge("kube_node_labels",
		`kube_node_labels{node="node-a",label_nvidia_com_gpu_sharing_strategy="time-slicing",label_nvidia_com_gpu_replicas="4"} 1`,
		`kube_node_labels{node="node-b",label_nvidia_com_mig_strategy="mixed"} 1`)
	gauge("vGPUCoreAllocated",
		`vGPUCoreAllocated{deviceuuid="GPU-a1",nodename="node-a",podname="hami-c",podnamespace="ml",zone="vGPU"} 60`,
		`vGPUCoreAllocated{deviceuuid="GPU-a1",nodename="node-a",podname="hami-d",podnamespace="ml",zone="vGPU"} 20`)
	fmt.Fprintf(bw, "# TYPE Device_utilization_desc_of_container gauge\n")
	for _, c := range []struct {
		pod string
		v   float64
	}{{"hami-c", 30}, {"hami-d", 10}} {
		for i := 0; i < 10; i++ {
			fmt.Fprintf(bw, `Device_utilization_desc_of_container{podnamespace="ml",podname=%q,ctrname="main",vdeviceid="0",deviceuuid="GPU-a1",job="hami-device-plugin",namespace="kube-system"} %g %.3f`+"\n",
				c.pod, busy(i, c.v), at(i)+5)
		}
	}
	fmt.Fprintf(bw, "# EOF\n")
	return bw.Flush()
}
