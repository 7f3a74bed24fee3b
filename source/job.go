package source

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seedance/seedance/profile"
)

// Job tracks the process tree of a command that `seedance profile -- CMD`
// runs, and records it as one workload of the local node.
type Job struct {
	Name     string
	PID      int
	ProcRoot string // "/proc"

	pids map[int]bool
	gpus []int
	uuid []string
	mem  uint64
}

// observe refreshes the process tree and notes the GPUs its processes use.
func (j *Job) observe(wls [][]profile.Workload) {
	if j.pids == nil {
		j.pids = map[int]bool{j.PID: true}
	}
	for _, pid := range Descendants(j.ProcRoot, j.PID) {
		j.pids[pid] = true
	}
	if len(wls) == 0 {
		return
	}
	for _, w := range wls[0] {
		for _, pid := range w.PIDs {
			if j.pids[pid] {
				for _, g := range w.GPUs {
					AddSorted(&j.gpus, g)
				}
				for _, u := range w.GPUUUIDs {
					AddSorted(&j.uuid, u)
				}
				if w.GPUMemoryBytes > j.mem {
					j.mem = w.GPUMemoryBytes
				}
				break
			}
		}
	}
}

// Workload returns the job as a workload.
func (j *Job) Workload() profile.Workload {
	pids := make([]int, 0, len(j.pids)+1)
	pids = append(pids, j.PID)
	for pid := range j.pids {
		if pid != j.PID {
			AddSorted(&pids, pid)
		}
	}
	return profile.Workload{
		ID: "job/" + j.Name + "-" + strconv.Itoa(j.PID), Name: j.Name, Kind: profile.KindJob,
		State: profile.StateRunning, GPUs: j.gpus, GPUUUIDs: j.uuid, GPUCount: len(j.gpus),
		GPUMemoryBytes: j.mem, PIDs: pids,
	}
}

// Descendants lists the processes below pid, found through the parent pid in
// each /proc/PID/stat.
func Descendants(procRoot string, pid int) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(string(b)); ok {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentPID reads field 4 of /proc/PID/stat; the command name (field 2) is in
// parentheses and may itself contain spaces and parentheses.
func parentPID(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	v, err := strconv.Atoi(f[1])
	return v, err == nil
}
