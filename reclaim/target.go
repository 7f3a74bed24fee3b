package reclaim

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/seedance/seedance/profile"
)

// Target kinds: the Kubernetes owners reclaim acts on, a bare pod, a Slurm
// job, and a process (notice only).
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindReplicaSet  = "ReplicaSet"
	KindJob         = "Job"
	KindPod         = "Pod"
	KindSlurmJob    = "SlurmJob"
	KindProcess     = "Process"
)

// Target is what a notice names and an action acts on: a Kubernetes owner
// (NS/KIND/NAME), a Slurm job (its id) or a process.
type Target struct {
	Kind, Namespace, Name string
}

// String is the target as the commands take it: NS/KIND/NAME for
// Kubernetes, the job id for Slurm, process:ID.
func (t Target) String() string {
	switch t.Kind {
	case KindSlurmJob:
		return t.Name
	case KindProcess:
		return "process:" + t.Name
	}
	return t.Namespace + "/" + t.Kind + "/" + t.Name
}

// Slurm says whether the target is a Slurm job.
func (t Target) Slurm() bool { return t.Kind == KindSlurmJob }

// Actionable says why reclaim cannot act on the target ("" when it can).
func (t Target) Actionable() string {
	switch t.Kind {
	case KindDeployment, KindStatefulSet, KindReplicaSet, KindJob, KindPod, KindSlurmJob:
		return ""
	case KindProcess:
		return "a process outside any scheduler: notice only"
	}
	return "seedance cannot act on a " + t.Kind + ": notice only"
}

var (
	slurmJobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)
	dnsName    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	// kindName is a Kubernetes kind: reclaim scales one it does not know
	// when the API server serves it with /scale.
	kindName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,62}$`)
)

// ParseTarget reads NS/KIND/NAME or a Slurm job id.
func ParseTarget(s string) (Target, error) {
	if slurmJobID.MatchString(s) {
		return Target{Kind: KindSlurmJob, Name: s}, nil
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Target{}, fmt.Errorf("target %q: want NAMESPACE/KIND/NAME (Deployment, StatefulSet, ReplicaSet, Job, Pod, or a kind with /scale) or a Slurm job id", s)
	}
	t := Target{Namespace: parts[0], Kind: parts[1], Name: parts[2]}
	if !kindName.MatchString(t.Kind) || t.Kind == KindSlurmJob || t.Kind == KindProcess {
		return Target{}, fmt.Errorf("target %q: kind %q is not a Kubernetes kind (Deployment, StatefulSet, ReplicaSet, Job, Pod, or a kind with /scale)", s, t.Kind)
	}
	if !dnsName.MatchString(t.Namespace) || !dnsName.MatchString(t.Name) {
		return Target{}, fmt.Errorf("target %q: not a Kubernetes namespace and name", s)
	}
	return t, nil
}

// TargetOf is the target that owns a workload: its controller (the
// seedance.io/controller label a source sets from kube_pod_owner), else
// the bare pod; a Slurm job; a process.
func TargetOf(w profile.Workload) Target {
	switch w.Kind {
	case profile.KindJob:
		return Target{Kind: KindSlurmJob, Name: w.ID}
	case profile.KindProcess:
		return Target{Kind: KindProcess, Name: w.ID}
	}
	ns, pod, ok := strings.Cut(w.ID, "/")
	if !ok {
		ns, pod = w.Labels["namespace"], w.ID
	}
	if kind, name, ok := strings.Cut(w.Labels[profile.ControllerLabel], "/"); ok && name != "" {
		return Target{Kind: kind, Namespace: ns, Name: name}
	}
	return Target{Kind: KindPod, Namespace: ns, Name: pod}
}

// Stored is the target as the ledger keeps it: KIND/NAMESPACE/NAME.
func (t Target) Stored() string { return t.Kind + "/" + t.Namespace + "/" + t.Name }

// ParseStored reads Stored's form.
func ParseStored(s string) (Target, error) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return Target{}, fmt.Errorf("not a stored target")
	}
	return Target{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
}
