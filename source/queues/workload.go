package queues

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
)

// workload is what seedance reads of a Kueue Workload.
type workload struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		QueueName string `json:"queueName"`
		// Active false: the Workload was deactivated (Kueue evicts and
		// holds it until it is active again).
		Active  *bool `json:"active"`
		PodSets []struct {
			Count    int `json:"count"`
			Template struct {
				Spec struct {
					Containers []struct {
						Resources struct {
							Requests map[string]json.RawMessage `json:"requests"`
							Limits   map[string]json.RawMessage `json:"limits"`
						} `json:"resources"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"podSets"`
	} `json:"spec"`
	Status struct {
		Admission *struct {
			ClusterQueue      string `json:"clusterQueue"`
			PodSetAssignments []struct {
				Flavors map[string]string `json:"flavors"`
			} `json:"podSetAssignments"`
		} `json:"admission"`
		Conditions conditions `json:"conditions"`
	} `json:"status"`
}

// conditions are an object's status conditions (Kueue's, Volcano's).
type conditions []struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// heldReasons are the reasons of a Workload's QuotaReserved=False that say
// it cannot reserve quota whatever the other queues leave idle (Kueue
// v0.19.2, apis/kueue/v1beta2/workload_types.go): its LocalQueue or
// ClusterQueue missing, inactive or stopped (Inadmissible), held
// (OnHold, AdmissionGated), asking for more than its queue could ever
// lend it (ExceedsMaxQuota), no flavor its request fits (NoMatchingFlavor),
// misconfigured, suspended. A Workload waiting for quota (Pending,
// WaitingForQuota and the like) waits for GPUs others hold.
var heldReasons = map[string]bool{"Inadmissible": true, "OnHold": true, "AdmissionGated": true, "ExceedsMaxQuota": true,
	"NoMatchingFlavor": true, "Misconfigured": true, "Suspended": true}

// heldBy is why a Workload that has not reserved quota is held by its own
// constraints (QueueSpan.HeldBy): its QuotaReserved=False reason when
// heldReasons has it, Deactivated when spec.active is false; "" when it
// waits for quota, or has reserved it (what held it before is not kept).
func (w *workload) heldBy() string {
	if a := w.Spec.Active; a != nil && !*a {
		return "Deactivated"
	}
	for _, c := range w.Status.Conditions {
		if c.Type == "QuotaReserved" && c.Status == "False" && heldReasons[c.Reason] {
			return c.Reason
		}
	}
	return ""
}

// trueSince is when the condition of the type turned True (zero: it is
// not True).
func (cs conditions) trueSince(typ string) time.Time {
	for _, c := range cs {
		if c.Type == typ && c.Status == "True" {
			return c.LastTransitionTime
		}
	}
	return time.Time{}
}

// gpus is what the workload asks for: each pod set's count × its pods'
// GPUs (a container's request, else its limit, which Kubernetes takes as
// the request for extended resources).
func (w *workload) gpus() (float64, error) {
	sum := 0.0
	for _, ps := range w.Spec.PodSets {
		per := 0.0
		for _, c := range ps.Template.Spec.Containers {
			asked := map[string]json.RawMessage{}
			maps.Copy(asked, c.Resources.Limits) // a limit stands for a request not set
			maps.Copy(asked, c.Resources.Requests)
			v, _, err := gpusOf(asked)
			if err != nil {
				return 0, err
			}
			per += v
		}
		sum += per * float64(max(0, ps.Count))
	}
	return sum, nil
}

// workload books one Workload: its wait, from its creation until its
// quota was reserved (or until it finished, or still), in the ClusterQueue
// its LocalQueue feeds; its reservation, from then until it finished (or
// still), in the ClusterQueue that admitted it; and its owners' queue.
// booked: it asks for GPUs and its queue is known.
func (b *Book) workload(w *workload, local map[string]string) (booked bool) {
	id := w.Metadata.Namespace + "/" + w.Metadata.Name
	gpus, err := w.gpus()
	if err != nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Workload %s: %v: left out", id, err))
		return false
	}
	if gpus <= 0 {
		return false // asks for no GPU
	}
	reserved, finished := w.Status.Conditions.trueSince("QuotaReserved"), w.Status.Conditions.trueSince("Finished")
	cq := ""
	if w.Status.Admission != nil {
		cq = w.Status.Admission.ClusterQueue
	}
	if cq == "" {
		cq = local[w.Metadata.Namespace+"/"+w.Spec.QueueName]
	}
	q := b.queues[cq]
	if q == nil {
		b.Warnings = append(b.Warnings, fmt.Sprintf("Workload %s: queue %q names no ClusterQueue: left out", id, cmp.Or(cq, w.Spec.QueueName)))
		return false
	}
	waitEnd := reserved
	if waitEnd.IsZero() {
		waitEnd = finished
	}
	wait := span{workload: id, gpus: gpus, start: w.Metadata.CreationTimestamp, end: waitEnd}
	if reserved.IsZero() {
		wait.heldBy = w.heldBy()
	}
	q.wait = append(q.wait, wait)
	if !reserved.IsZero() {
		q.admitted = append(q.admitted, span{workload: id, gpus: gpus, start: reserved, end: finished})
		for _, o := range w.Metadata.OwnerReferences {
			b.owners[w.Metadata.Namespace+"/"+o.Kind+"/"+o.Name] = cq
		}
	}
	return true
}

// quotaSums sums a ClusterQueue's GPU quota over its flavors; a limit is
// known only when every flavor sets one.
type quotaSums struct {
	nominal, borrow, lend       float64
	flavors, borrowSet, lendSet int
	bad                         bool
}

func (s *quotaSums) add(nominal, borrow, lend json.RawMessage) error {
	n, err := quantity(nominal)
	if err != nil {
		return err
	}
	s.nominal += n
	s.flavors++
	for _, l := range []struct {
		raw json.RawMessage
		sum *float64
		set *int
	}{{borrow, &s.borrow, &s.borrowSet}, {lend, &s.lend, &s.lendSet}} {
		if len(l.raw) == 0 || string(l.raw) == "null" {
			continue
		}
		v, err := quantity(l.raw)
		if err != nil {
			return err
		}
		*l.sum += v
		*l.set++
	}
	return nil
}

func (s *quotaSums) set(q *profile.Queue) {
	if s.bad || s.flavors == 0 {
		return
	}
	n := s.nominal
	q.NominalGPUs = &n
	if s.borrowSet == s.flavors {
		b := s.borrow
		q.BorrowingLimitGPUs = &b
	}
	if s.lendSet == s.flavors {
		l := s.lend
		q.LendingLimitGPUs = &l
	}
}

// quantity reads a Kubernetes quantity of GPUs: a number or a string of
// a decimal with an optional SI suffix (m, k, M, G); a binary suffix
// (Ki) or anything else is not a count of GPUs.
func quantity(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return 0, fmt.Errorf("quantity %.40s is not a number", raw)
		}
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	orig, mult := s, 1.0
	for suf, m := range map[string]float64{"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9} {
		if t, ok := strings.CutSuffix(s, suf); ok {
			s, mult = t, m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*mult > 1e9 {
		return 0, fmt.Errorf("quantity %q is not a count of GPUs seedance knows", orig)
	}
	return v * mult, nil
}
