package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

func TestAddPending(t *testing.T) {
	p := &profile.Profile{Nodes: []profile.Node{{Name: "node-gpu-01"}, {Name: "node-gpu-02"}}}
	squeue := func(_ context.Context, args ...string) ([]byte, error) {
		if strings.Join(args, " ") != "--noheader --states=PENDING --format=%i|%b|%n|%u|%a" {
			t.Fatalf("squeue %v", args)
		}
		return []byte("3|gres:gpu:2|node-gpu-02|alice|research\n" +
			"4|gres:gpu:1||bob|ml\n" + // waits for any node
			"5|N/A|node-gpu-01|carol|ml\n" + // no GPUs
			"6|gres/gpu:a100:4|node-gpu-01|dave|(null)\n" +
			"7|gres:gpu:1|node-gpu-[01-02]|erin|ml\n" + // several nodes
			"garbage\n"), nil
	}
	notes, err := AddPending(context.Background(), p, squeue)
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Nodes[0].Workloads, p.Nodes[1].Workloads
	if len(a) != 1 || a[0].ID != "6" || a[0].GPUCount != 4 || a[0].Kind != profile.KindJob || a[0].State != profile.StatePending ||
		a[0].Labels["user"] != "dave" || a[0].Labels["account"] != "" {
		t.Fatalf("node-gpu-01: %+v", a)
	}
	if len(b) != 1 || b[0].ID != "3" || b[0].GPUCount != 2 || b[0].Labels["account"] != "research" {
		t.Fatalf("node-gpu-02: %+v", b)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "2 pending GPU job(s) wait for no one node of this profile: 4, 7") {
		t.Fatalf("notes %q", notes)
	}
	if _, err := AddPending(context.Background(), p, func(context.Context, ...string) ([]byte, error) { return nil, errors.New("no controller") }); err == nil {
		t.Fatal("a failed squeue was not said")
	}
}

// TestAddOwners: running jobs get user and account from squeue, the ones
// squeue has forgotten from sacct (one command for all of them), and the
// rest are said in a note; labels a job has already are kept.
func TestAddOwners(t *testing.T) {
	job := func(id string, labels map[string]string) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindJob, State: profile.StateRunning, Labels: labels}
	}
	p := &profile.Profile{Nodes: []profile.Node{{Name: "n", Workloads: []profile.Workload{
		job("10", nil), job("11", nil), job("12_3", nil), job("13", map[string]string{"user": "root", "account": "ops"}),
		job("99", nil), job("job/train-42", nil),
		{ID: "ml/pod", Kind: profile.KindPod, State: profile.StateRunning},
	}}}}
	squeue := func(_ context.Context, args ...string) ([]byte, error) {
		if strings.Join(args, " ") != "--noheader --states=all --format=%A|%i|%u|%a" {
			t.Fatalf("squeue %v", args)
		}
		return []byte("10|10|alice|research\n" + "57|12_3|bob|(null)\n" + "garbage\n"), nil
	}
	var sacctArgs []string
	sacct := func(_ context.Context, args ...string) ([]byte, error) {
		sacctArgs = args
		return []byte("11|11|carol|vision\n"), nil
	}
	notes, err := AddOwners(context.Background(), p, squeue, sacct)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range p.Nodes[0].Workloads {
		got[w.ID] = w.Labels["user"] + "/" + w.Labels["account"]
	}
	want := map[string]string{"10": "alice/research", "11": "carol/vision", "12_3": "bob/", "13": "root/ops", "99": "/", "job/train-42": "/", "ml/pod": "/"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("owners %v, want %v", got, want)
	}
	if strings.Join(sacctArgs, " ") != "--noheader --parsable2 --allocations --format=JobIDRaw,JobID,User,Account --jobs=11,99" {
		t.Fatalf("sacct %v", sacctArgs)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "of 1 Slurm job(s) are unknown (squeue no longer lists them and sacct does not know them): 99") {
		t.Fatalf("notes %q", notes)
	}
	// Without accounting, sacct fails: its message is in the note, one line.
	p.Nodes[0].Workloads = []profile.Workload{job("99", nil)}
	notes, err = AddOwners(context.Background(), p, squeue, func(context.Context, ...string) ([]byte, error) {
		return nil, errors.New("sacct: exit status 1: Slurm accounting storage is disabled\nmore")
	})
	if err != nil || len(notes) != 1 || !strings.HasSuffix(notes[0], "Slurm accounting storage is disabled): 99") {
		t.Fatalf("notes %q, %v", notes, err)
	}
}
