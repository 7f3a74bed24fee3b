// Package queues reads the queue structure of the schedulers that share
// a Kubernetes cluster between teams, from the API server (read-only):
// Kueue's ClusterQueues and Workloads, Volcano's and KAI's Queues and
// PodGroups:
// each queue's GPU quota and cohort, what its workloads reserved and
// waited for. It gives a profile its Queues and each pod its queue
// (docs/queues.md). What it reads is the objects as they are at the read:
// a Workload's conditions keep its latest admission only.
package queues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/profile"
)

// Book is what the read found: the queues as profile queues (the spans in
// absolute time until Queues places them), and which pods' owners were
// admitted through which queue.
type Book struct {
	// Versions are the API groups and versions read.
	Versions []string
	queues   map[string]*queue
	// owners maps namespace/Kind/name (a Job, a Pod) to its queue.
	owners map[string]string
	// podOwner maps namespace/pod to its controller, Kind/Name, as the
	// API server has it (pods.go).
	podOwner map[string]string
	// Warnings name the objects that could not be read whole.
	Warnings []string
}

type queue struct {
	q              profile.Queue
	admitted, wait []span
}

type span struct {
	workload   string
	gpus       float64
	start, end time.Time // end zero: still going
	heldBy     string    // a wait held by the workload's own constraints (QueueSpan.HeldBy)
}

// unserved says why a group that serves none of the known versions gives
// no queues: a warning naming the versions it serves, when it is served
// at all.
func (b *Book) unserved(ctx context.Context, c *kubeapi.Client, group string, known []string) {
	var g struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	if c.Get(ctx, "/apis/"+group, &g) != nil || len(g.Versions) == 0 {
		return // not served: not installed
	}
	var served []string
	for _, v := range g.Versions {
		served = append(served, v.Version)
	}
	b.Warnings = append(b.Warnings, fmt.Sprintf("the API server serves %s %s, none of the versions seedance reads (%s): its queues are not read",
		group, strings.Join(served, ", "), strings.Join(known, ", ")))
}

// Read lists Kueue's objects, Volcano's and KAI's, those the server
// serves. A server that serves none gives a nil Book and no error: no
// queues. When several are served, the queues of the second and third
// are named volcano/NAME and kai/NAME.
func Read(ctx context.Context, c *kubeapi.Client) (*Book, error) {
	b := &Book{queues: map[string]*queue{}, owners: map[string]string{}, podOwner: map[string]string{}}
	found, err := b.readKueue(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, s := range []struct {
		prefix string
		read   func(context.Context, *kubeapi.Client, string) (bool, error)
	}{{"volcano/", b.readVolcano}, {"kai/", b.readKAI}} {
		prefix := ""
		if found {
			prefix = s.prefix
		}
		ok, err := s.read(ctx, c, prefix)
		if err != nil {
			return nil, err
		}
		found = found || ok
	}
	if !found && len(b.Warnings) == 0 {
		return nil, nil
	}
	b.orphans()
	b.readPodOwners(ctx, c)
	return b, nil
}

// orphans notes each Volcano or KAI queue whose parent is not a queue of
// its kind (Volcano's root aside): its cohort is then its own.
func (b *Book) orphans() {
	names := make([]string, 0, len(b.queues))
	for n := range b.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		q := &b.queues[n].q
		if q.Kind == profile.QueueKueue || q.Cohort == "" || q.Kind == QueueVolcano && strings.TrimPrefix(q.Cohort, "volcano/") == "root" {
			continue
		}
		if p := b.queues[q.Cohort]; p == nil || p.q.Kind != q.Kind {
			b.Warnings = append(b.Warnings, fmt.Sprintf("%s queue %s names parent %s, which is not a queue: its cohort unknown", q.Kind, n, q.Cohort))
			q.Cohort = ""
		}
	}
}

// gpusOf sums a resource list's GPUs; ok is false when it names none.
func gpusOf(rl map[string]json.RawMessage) (sum float64, ok bool, err error) {
	for name, q := range rl {
		if IsGPU(name) {
			v, err := quantity(q)
			if err != nil {
				return 0, false, fmt.Errorf("%s: %v", name, err)
			}
			sum, ok = sum+v, true
		}
	}
	return sum, ok, nil
}

// IsGPU says whether a resource name counts whole GPUs: nvidia.com/gpu,
// amd.com/gpu, gpu.intel.com/i915 and kin ("…/gpu"). A MIG resource
// (nvidia.com/mig-1g.10gb) counts slices, not GPUs: not read.
func IsGPU(resource string) bool {
	return strings.HasSuffix(resource, "/gpu") || resource == "gpu.intel.com/i915"
}

// Queues gives the queues with their spans in seconds from start, cut to
// [start, end]; a span still going ends at end.
func (b *Book) Queues(start, end time.Time) []profile.Queue {
	if b == nil {
		return nil
	}
	names := make([]string, 0, len(b.queues))
	for n := range b.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]profile.Queue, 0, len(names))
	for _, n := range names {
		q := b.queues[n]
		pq := q.q
		pq.Admitted, pq.Pending = place(q.admitted, start, end), place(q.wait, start, end)
		out = append(out, pq)
	}
	return out
}

func place(ss []span, start, end time.Time) []profile.QueueSpan {
	var out []profile.QueueSpan
	for _, s := range ss {
		to := s.end
		if to.IsZero() || to.After(end) {
			to = end
		}
		from := s.start
		if from.Before(start) {
			from = start
		}
		if to.After(from) {
			out = append(out, profile.QueueSpan{Workload: s.workload, GPUs: s.gpus, StartS: from.Sub(start).Seconds(), EndS: to.Sub(start).Seconds(), HeldBy: s.heldBy})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Workload < out[j].Workload || out[i].Workload == out[j].Workload && out[i].StartS < out[j].StartS
	})
	return out
}

// Apply names the queue of each pod on the nodes whose owner (the
// controller kube-state-metrics names, or the pod itself) a Workload
// admitted.
func (b *Book) Apply(nodes []profile.Node) {
	if b == nil {
		return
	}
	for ni := range nodes {
		for wi := range nodes[ni].Workloads {
			w := &nodes[ni].Workloads[wi]
			ns, pod, ok := strings.Cut(w.ID, "/")
			if !ok || w.Kind != profile.KindPod && w.Kind != "" {
				continue
			}
			if q := b.queueOf(ns, w); q != "" {
				w.Queue = q
			} else if q := b.owners[ns+"/Pod/"+pod]; q != "" {
				w.Queue = q
			}
		}
	}
}

// each lists path and hands each object, decoded as T, to book; what
// names the object in an error.
func each[T any](ctx context.Context, c *kubeapi.Client, path, what string, book func(*T)) error {
	return c.List(ctx, path, func(raw json.RawMessage) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("a %s: %v", what, err)
		}
		book(&v)
		return nil
	})
}

// group is a scheduler's API group of queues and PodGroups (Volcano's,
// KAI's): where each is listed, the version the read names, and what an
// error of the read begins with.
type group struct {
	name, version, queues, podGroups, kind, errAt string
}

// readGroup lists g's queues, then its PodGroups, into b; found is false
// when the server does not serve the queues (a note says what it serves).
func readGroup[Q, P any](ctx context.Context, b *Book, c *kubeapi.Client, g group, queue func(*Q), podGroup func(*P)) (found bool, err error) {
	err = each(ctx, c, g.queues, g.kind+" Queue", queue)
	if errors.Is(err, kubeapi.ErrNotFound) {
		b.unserved(ctx, c, g.name, []string{g.version})
		return false, nil
	}
	if err == nil {
		err = each(ctx, c, g.podGroups, g.kind+" PodGroup", podGroup)
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", g.errAt, err)
	}
	b.Versions = append(b.Versions, g.name+"/"+g.version)
	return true, nil
}
