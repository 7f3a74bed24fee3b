package reclaim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Policy is what makes a workload a candidate and what is done about it
// (settings under reclaim:, docs/reclaim.md).
type Policy struct {
	// IdleFor is how long every GPU of a workload must have stayed idle
	// since its last activity.
	IdleFor time.Duration
	// ThresholdPct: a sample below it is idle (the analysis' idle
	// threshold, which lies above dcgm's 0.5–1 % noise floor).
	ThresholdPct float64
	// PowerVetoW, when above 0: a sample drawing at least this many watts
	// is activity whatever its utilization.
	PowerVetoW float64
	// BusyFraction: a sample is the workload's activity when more than
	// this share of its GPUs are active (0: any one).
	BusyFraction float64
	// StartupGrace spares a workload that began holding its GPUs less than
	// this long ago.
	StartupGrace time.Duration
	// MaxStaleness: data whose last sample is older than this is stale,
	// and its workloads unknown.
	MaxStaleness time.Duration
	// MaxGap: samples further apart than this (or a null) inside the idle
	// run make a workload unknown.
	MaxGap time.Duration
	// Grace is the time from a delivered notice to the action.
	Grace time.Duration
	// Renotify, when above 0, sends an episode's notice again after it.
	Renotify time.Duration
	// MaxActionsPerRun and MaxActionsPerHour cap the actions; a
	// namespace's (or Slurm account's) share of targets acted on in one
	// run is capped at MaxNamespaceShare.
	MaxActionsPerRun, MaxActionsPerHour int
	MaxNamespaceShare                   float64
	// Scope says which workloads reclaim may touch.
	Scope Scope
}

// DefaultPolicy is the policy of docs/reclaim.md's defaults.
func DefaultPolicy() Policy {
	return Policy{IdleFor: 2 * time.Hour, ThresholdPct: 15, BusyFraction: 0,
		StartupGrace: 15 * time.Minute, MaxStaleness: 10 * time.Minute, MaxGap: 5 * time.Minute,
		Grace: time.Hour, MaxActionsPerRun: 5, MaxActionsPerHour: 20, MaxNamespaceShare: 0.5}
}

// NeverLabel on a pod, owner or job exempts it ("never").
const NeverLabel = "seedance.io/reclaim"

// KeepUntilAnnotation on an owner keeps it until an RFC 3339 time.
const KeepUntilAnnotation = "seedance.io/keep-until"

// Scope is what reclaim may touch: empty include lists include all.
type Scope struct {
	Namespaces, ExcludeNamespaces []string
	// Selector is a label selector (a=b, a!=b, a, !a; comma-separated).
	Selector                                   string
	Partitions, ExcludePartitions              []string
	Accounts, ExcludeAccounts, QOS, ExcludeQOS []string
	sel                                        []requirement
}

type requirement struct {
	key, value string
	op         string // "=", "!=", "exists", "!exists"
}

// Compile parses the selector; the error names the part it cannot read.
func (s *Scope) Compile() error {
	s.sel = nil
	if strings.TrimSpace(s.Selector) == "" {
		return nil
	}
	for _, part := range strings.Split(s.Selector, ",") {
		r, err := parseRequirement(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("selector %q: %v", s.Selector, err)
		}
		s.sel = append(s.sel, r)
	}
	return nil
}

func parseRequirement(p string) (requirement, error) {
	validKey := func(k string) bool {
		return k != "" && !strings.ContainsAny(k, " =!(),") && len(k) <= 317
	}
	switch {
	case strings.Contains(p, "!="):
		k, v, _ := strings.Cut(p, "!=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !validKey(k) || strings.ContainsAny(v, " =!") {
			return requirement{}, fmt.Errorf("cannot read %q", p)
		}
		return requirement{key: k, value: v, op: "!="}, nil
	case strings.Contains(p, "="):
		k, v, _ := strings.Cut(strings.Replace(p, "==", "=", 1), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !validKey(k) || strings.ContainsAny(v, " =!") {
			return requirement{}, fmt.Errorf("cannot read %q", p)
		}
		return requirement{key: k, value: v, op: "="}, nil
	case strings.HasPrefix(p, "!"):
		if k := strings.TrimSpace(p[1:]); validKey(k) {
			return requirement{key: k, op: "!exists"}, nil
		}
	case validKey(p):
		return requirement{key: p, op: "exists"}, nil
	}
	return requirement{}, fmt.Errorf("cannot read %q", p)
}

// matches says whether the labels satisfy the selector.
func (s *Scope) matches(labels map[string]string) bool {
	for _, r := range s.sel {
		v, ok := labels[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.value {
				return false
			}
		case "!=":
			if ok && v == r.value {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!exists":
			if ok {
				return false
			}
		}
	}
	return true
}

// Out says why a workload with these labels is out of scope ("" when in).
func (s *Scope) Out(t Target, labels map[string]string) string {
	if labels[NeverLabel] == "never" {
		return NeverLabel + ": never"
	}
	in := func(v string, include, exclude []string, what string) string {
		if slices.Contains(exclude, v) {
			return what + " " + v + " is excluded"
		}
		if len(include) > 0 && !slices.Contains(include, v) {
			return what + " " + v + " is not included"
		}
		return ""
	}
	var why string
	if t.Slurm() {
		why = first(in(labels["partition"], s.Partitions, s.ExcludePartitions, "partition"),
			in(labels["account"], s.Accounts, s.ExcludeAccounts, "account"),
			in(labels["qos"], s.QOS, s.ExcludeQOS, "QOS"))
	} else {
		why = in(t.Namespace, s.Namespaces, s.ExcludeNamespaces, "namespace")
	}
	if why == "" && !s.matches(labels) {
		why = "the selector " + s.Selector + " does not match"
	}
	return why
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
