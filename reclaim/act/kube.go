package act

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/reclaim"
)

// Annotations reclaim writes on an owner it scaled to 0: the replicas it
// had (for restore) and when.
const (
	ReplicasAnnotation = "seedance.io/reclaimed-replicas"
	AtAnnotation       = "seedance.io/reclaimed-at"
)

// Kube acts on Kubernetes owners through the API server.
type Kube struct {
	W     *kubeapi.Writer
	found scaleKinds // discovery's, for kinds reclaim does not know
}

// object is what reclaim reads of an owner or pod.
type object struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int64 `json:"replicas"`
		Suspend  *bool  `json:"suspend"`
	} `json:"spec"`
}

// path is the API path of a target's object: a kind reclaim does not know
// is looked up by discovery (discover.go).
func (k *Kube) path(ctx context.Context, t reclaim.Target) (string, error) {
	ns := url.PathEscape(t.Namespace)
	name := url.PathEscape(t.Name)
	switch t.Kind {
	case reclaim.KindDeployment:
		return "/apis/apps/v1/namespaces/" + ns + "/deployments/" + name, nil
	case reclaim.KindStatefulSet:
		return "/apis/apps/v1/namespaces/" + ns + "/statefulsets/" + name, nil
	case reclaim.KindReplicaSet:
		return "/apis/apps/v1/namespaces/" + ns + "/replicasets/" + name, nil
	case reclaim.KindJob:
		return "/apis/batch/v1/namespaces/" + ns + "/jobs/" + name, nil
	case reclaim.KindPod:
		return "/api/v1/namespaces/" + ns + "/pods/" + name, nil
	}
	return k.customPath(ctx, t.Kind, t.Namespace, t.Name)
}

// Check reads the owner and says why it must not be acted on now: an
// exemption label or annotation, a keep-until annotation in force (or one
// that cannot be read, which keeps it too).
func (k *Kube) Check(ctx context.Context, t reclaim.Target, now time.Time) (string, error) {
	p, err := k.path(ctx, t)
	if err != nil {
		return "", err
	}
	var o object
	if err := k.W.Get(ctx, p, &o); err != nil {
		return "", err
	}
	return exempt(o.Metadata.Labels, o.Metadata.Annotations, now), nil
}

// exempt is why an owner's labels or annotations keep it ("": none).
func exempt(labels, ann map[string]string, now time.Time) string {
	if labels[reclaim.NeverLabel] == "never" || ann[reclaim.NeverLabel] == "never" {
		return reclaim.NeverLabel + ": never on the owner"
	}
	v, ok := ann[reclaim.KeepUntilAnnotation]
	if !ok {
		return ""
	}
	until, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return fmt.Sprintf("%s %q is not an RFC 3339 time: kept until it is fixed", reclaim.KeepUntilAnnotation, v)
	}
	if now.Before(until) {
		return reclaim.KeepUntilAnnotation + " " + until.UTC().Format(time.RFC3339) + " on the owner"
	}
	return ""
}

// Act scales the owner to 0 (recording its replicas on it first),
// suspends the Job or evicts the pod. It returns what it did and the
// previous replica count; a refusal (a PodDisruptionBudget) is ErrRefused.
func (k *Kube) Act(ctx context.Context, t reclaim.Target, now time.Time) (action, previous string, err error) {
	p, err := k.path(ctx, t)
	if err != nil {
		return "", "", err
	}
	switch t.Kind {
	case reclaim.KindJob:
		err := k.W.MergePatch(ctx, p, map[string]any{"spec": map[string]any{"suspend": true}}, nil)
		return "suspended", "", err
	case reclaim.KindPod:
		return "evicted", "", k.evict(ctx, t, p)
	}
	return k.scaleToZero(ctx, p, now) // a Deployment, StatefulSet, ReplicaSet, or a kind discovery found with /scale
}

// scaleToZero scales the object at p to 0, its replicas recorded on it
// first.
func (k *Kube) scaleToZero(ctx context.Context, p string, now time.Time) (string, string, error) {
	var scale struct {
		Spec struct {
			Replicas int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := k.W.Get(ctx, p+"/scale", &scale); err != nil {
		return "", "", err
	}
	n := scale.Spec.Replicas
	if n == 0 {
		return "already at 0 replicas", "", nil
	}
	prev := strconv.FormatInt(n, 10)
	// Recorded on the owner before the scale, so that a restore finds it
	// even if this pass dies between the two.
	ann := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		ReplicasAnnotation: prev, AtAnnotation: now.UTC().Format(time.RFC3339)}}}
	if err := k.W.MergePatch(ctx, p, ann, nil); err != nil {
		return "", "", err
	}
	err := k.W.MergePatch(ctx, p+"/scale", map[string]any{"spec": map[string]any{"replicas": 0}}, nil)
	return "scaled to 0 from " + prev, prev, err
}

func (k *Kube) evict(ctx context.Context, t reclaim.Target, p string) error {
	ev := map[string]any{"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": t.Name, "namespace": t.Namespace}}
	err := k.W.Create(ctx, p+"/eviction", ev, nil)
	var se *kubeapi.StatusError
	if errors.As(err, &se) && se.Code == http.StatusTooManyRequests {
		return fmt.Errorf("%w: the eviction of %s was refused (a PodDisruptionBudget): %s", ErrRefused, t, se.Message)
	}
	return err
}

// Restore puts a scaled owner back to the replicas recorded on it, or
// resumes a suspended Job. An evicted pod cannot be restored (its owner, if
// any, recreates it).
func (k *Kube) Restore(ctx context.Context, t reclaim.Target) (string, error) {
	p, err := k.path(ctx, t)
	if err != nil {
		return "", err
	}
	switch t.Kind {
	case reclaim.KindJob:
		return "resumed", k.W.MergePatch(ctx, p, map[string]any{"spec": map[string]any{"suspend": false}}, nil)
	case reclaim.KindPod:
		return "", fmt.Errorf("%w: an evicted pod cannot be restored: recreate it", ErrRefused)
	}
	var o object
	if err := k.W.Get(ctx, p, &o); err != nil {
		return "", err
	}
	prev, ok := o.Metadata.Annotations[ReplicasAnnotation]
	n, err := strconv.ParseInt(prev, 10, 32)
	if !ok || err != nil || n < 1 {
		return "", fmt.Errorf("%w: %s has no %s annotation to restore from", ErrRefused, t, ReplicasAnnotation)
	}
	if err := k.W.MergePatch(ctx, p+"/scale", map[string]any{"spec": map[string]any{"replicas": n}}, nil); err != nil {
		return "", err
	}
	drop := map[string]any{"metadata": map[string]any{"annotations": map[string]any{ReplicasAnnotation: nil, AtAnnotation: nil}}}
	return "scaled back to " + prev, k.W.MergePatch(ctx, p, drop, nil)
}
