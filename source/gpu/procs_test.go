package gpu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/profile"
)

func TestParseCgroup(t *testing.T) {
	tests := []struct {
		name, in, uid, container string
	}{
		{"cgroup v1 cgroupfs",
			"12:devices:/kubepods/burstable/pod0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e/3f4e5d6c7b8a\n",
			"0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e", "3f4e5d6c7b8a"},
		{"cgroup v2 systemd containerd",
			"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0d4a3a9c_8f5e_4b1d_9c1e_2f3a4b5c6d7e.slice/cri-containerd-abc123.scope\n",
			"0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e", "abc123"},
		{"pod-level cgroup only",
			"0::/kubepods.slice/kubepods-pod0d4a3a9c_8f5e_4b1d_9c1e_2f3a4b5c6d7e.slice\n",
			"0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e", ""},
		{"not kubernetes", "0::/user.slice/user-1000.slice/session-2.scope\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid, c := ParseCgroup([]byte(tt.in))
			if uid != tt.uid || c != tt.container {
				t.Fatalf("got %q %q, want %q %q", uid, c, tt.uid, tt.container)
			}
		})
	}
}

func TestProcFSResolvesPods(t *testing.T) {
	root := t.TempDir()
	proc, pods := filepath.Join(root, "proc"), filepath.Join(root, "pods")
	write := func(path, s string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "4242", "comm"), "python3\n")
	write(filepath.Join(proc, "4242", "cgroup"), "0::/kubepods.slice/kubepods-pod0d4a3a9c_8f5e_4b1d_9c1e_2f3a4b5c6d7e.slice/cri-containerd-feed.scope\n")
	write(filepath.Join(proc, "77", "comm"), "nvidia-smi\n")
	write(filepath.Join(proc, "77", "cgroup"), "0::/user.slice\n")
	if err := os.MkdirAll(filepath.Join(pods, "ml_llama-7b-infer-5f6d_0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e"), 0o755); err != nil {
		t.Fatal(err)
	}

	r := &ProcFS{ProcRoot: proc, PodsDir: pods}
	info := r.Resolve(4242)
	if info.Namespace != "ml" || info.Pod != "llama-7b-infer-5f6d" || info.Container != "feed" || info.Name != "python3" {
		t.Fatalf("info = %+v", info)
	}
	w := info.Workload(4242)
	if w.ID != "ml/llama-7b-infer-5f6d" || w.Kind != profile.KindPod || w.Labels["namespace"] != "ml" {
		t.Fatalf("workload = %+v", w)
	}
	p := r.Resolve(77)
	if w := p.Workload(77); w.ID != "process/77" || w.Kind != profile.KindProcess || w.Name != "nvidia-smi" {
		t.Fatalf("plain process workload = %+v", w)
	}
	// A pod whose log directory is gone is still a pod, named by its UID.
	os.RemoveAll(pods)
	r2 := &ProcFS{ProcRoot: proc, PodsDir: pods}
	if w := r2.Resolve(4242).Workload(4242); w.ID != "pod/0d4a3a9c-8f5e-4b1d-9c1e-2f3a4b5c6d7e" {
		t.Fatalf("unnamed pod workload = %+v", w)
	}
	// A process that has exited resolves to nothing, without error.
	if got := r.Resolve(99999); got.Name != "" {
		t.Fatalf("exited process = %+v", got)
	}
}

// TestProcFSResolvesSlurmJobs: a process outside any pod whose environment
// names a Slurm job is that job's workload, as squeue and scontrol name it.
func TestProcFSResolvesSlurmJobs(t *testing.T) {
	proc := t.TempDir()
	for pid, env := range map[string]string{
		"500": "PATH=/usr/bin\x00SLURM_JOB_ID=4242\x00SLURM_JOB_USER=alice\x00SLURM_JOB_ACCOUNT=research\x00",
		"501": "SLURM_JOB_ID=$(reboot)\x00", // not a job id
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{"comm": "python3\n", "cgroup": "0::/system.slice/slurmstepd.scope/job_4242\n", "environ": env} {
			if err := os.WriteFile(filepath.Join(proc, pid, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := &ProcFS{ProcRoot: proc}
	w := r.Resolve(500).Workload(500)
	if w.ID != "4242" || w.Name != "4242" || w.Kind != profile.KindJob || w.Labels["user"] != "alice" || w.Labels["account"] != "research" {
		t.Fatalf("workload %+v", w)
	}
	if w := r.Resolve(501).Workload(501); w.ID != "process/501" || w.Kind != profile.KindProcess {
		t.Fatalf("a bad SLURM_JOB_ID made a job: %+v", w)
	}
}
