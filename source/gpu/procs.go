package gpu

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// ProcInfo is what seedance knows about a process found on a GPU.
type ProcInfo struct {
	Name      string // from /proc/PID/comm
	PodUID    string // Kubernetes pod UID from /proc/PID/cgroup
	Namespace string
	Pod       string
	Container string // container ID
	// SlurmJob, SlurmUser and SlurmAccount are the Slurm job the process
	// runs in (SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_ACCOUNT in its
	// environment), for a process that is not in a pod.
	SlurmJob, SlurmUser, SlurmAccount string
	// CPUsAllowed is the process's Cpus_allowed_list.
	CPUsAllowed string
	// Labels are the pod's own labels, when the resolver knows them (the
	// simulator's team); a node's processes do not say them.
	Labels map[string]string
}

// WorkloadID is the id of the workload the process belongs to.
func (p ProcInfo) WorkloadID(pid int) string {
	switch {
	case p.Pod != "":
		return p.Namespace + "/" + p.Pod
	case p.PodUID != "":
		return "pod/" + p.PodUID
	case p.SlurmJob != "":
		return p.SlurmJob // as squeue and scontrol name it
	}
	return "process/" + strconv.Itoa(pid)
}

// Workload returns a new workload for the process, without GPUs.
func (p ProcInfo) Workload(pid int) *profile.Workload {
	w := &profile.Workload{ID: p.WorkloadID(pid), State: profile.StateRunning, CPUsAllowed: p.CPUsAllowed}
	switch {
	case p.PodUID != "":
		w.Kind, w.Name = profile.KindPod, p.Pod
		if w.Name == "" {
			w.Name = p.PodUID
		}
		w.Labels = map[string]string{"pod_uid": p.PodUID}
		if p.Namespace != "" {
			w.Labels["namespace"] = p.Namespace
		}
		if p.Container != "" {
			w.Labels["container_id"] = p.Container
		}
		for k, v := range p.Labels {
			w.Labels[k] = v
		}
	case p.SlurmJob != "":
		w.Kind, w.Name = profile.KindJob, p.SlurmJob
		w.Labels = map[string]string{}
		for k, v := range map[string]string{"user": p.SlurmUser, "account": p.SlurmAccount} {
			if v != "" {
				w.Labels[k] = v
			}
		}
	default:
		w.Kind, w.Name = profile.KindProcess, p.Name
		if w.Name == "" {
			w.Name = strconv.Itoa(pid)
		}
	}
	return w
}

// ProcResolver looks up processes found on GPUs.
type ProcResolver interface {
	Resolve(pid int) ProcInfo
}

// NoProcResolver knows nothing about processes.
type NoProcResolver struct{}

// Resolve returns an empty ProcInfo.
func (NoProcResolver) Resolve(int) ProcInfo { return ProcInfo{} }

// ProcFS resolves processes through procfs and maps Kubernetes pods found in
// their cgroup paths to names through the kubelet's log directory
// (/var/log/pods/NAMESPACE_NAME_UID), which every kubelet writes.
type ProcFS struct {
	ProcRoot string // "/proc"
	PodsDir  string // "/var/log/pods"

	mu   sync.Mutex
	pods map[string][2]string // uid -> namespace, name
}

var podUIDRe = regexp.MustCompile(`pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})`)

// Resolve implements ProcResolver.
func (p *ProcFS) Resolve(pid int) ProcInfo {
	dir := filepath.Join(p.ProcRoot, strconv.Itoa(pid))
	var info ProcInfo
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		info.Name = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		info.PodUID, info.Container = ParseCgroup(b)
	}
	if info.PodUID != "" {
		info.Namespace, info.Pod = p.podName(info.PodUID)
	} else {
		info.SlurmJob, info.SlurmUser, info.SlurmAccount = slurmJob(filepath.Join(dir, "environ"))
	}
	_, info.CPUsAllowed = hwtopo.ProcessCPUs(p.ProcRoot, pid)
	return info
}

// slurmJob reads the Slurm job of a process from its environment (a
// process of a batch job inherits SLURM_JOB_ID). The read is bounded: an
// environment is at most a few hundred KiB.
func slurmJob(environ string) (job, user, account string) {
	f, err := os.Open(environ)
	if err != nil {
		return "", "", "" // gone, or another user's without privileges
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, _ := strings.Cut(string(kv), "=")
		if len(v) > profile.MaxNameBytes {
			continue
		}
		switch k {
		case "SLURM_JOB_ID":
			if _, err := strconv.ParseUint(v, 10, 64); err == nil {
				job = v
			}
		case "SLURM_JOB_USER":
			user = v
		case "SLURM_JOB_ACCOUNT":
			account = v
		}
	}
	if job == "" {
		return "", "", ""
	}
	return job, user, account
}

// ParseCgroup finds the Kubernetes pod UID and container ID in the contents
// of /proc/PID/cgroup, for both the cgroupfs and the systemd cgroup drivers.
func ParseCgroup(b []byte) (podUID, container string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "kubepods") {
			continue
		}
		m := podUIDRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		podUID = strings.ReplaceAll(m[1], "_", "-")
		last := line[strings.LastIndexByte(line, '/')+1:]
		last = strings.TrimSuffix(last, ".scope")
		for _, prefix := range []string{"cri-containerd-", "docker-", "crio-", "containerd-"} {
			last = strings.TrimPrefix(last, prefix)
		}
		if !strings.Contains(last, "pod") {
			container = last
		}
		return podUID, container
	}
	return "", ""
}

func (p *ProcFS) podName(uid string) (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.pods[uid]; ok {
		return v[0], v[1]
	}
	// Unknown UID: list the directory again (a pod may have started).
	p.pods = map[string][2]string{}
	entries, _ := os.ReadDir(p.PodsDir)
	for _, e := range entries {
		parts := strings.Split(e.Name(), "_")
		if len(parts) == 3 {
			p.pods[parts[2]] = [2]string{parts[0], parts[1]}
		}
	}
	v := p.pods[uid]
	return v[0], v[1]
}
