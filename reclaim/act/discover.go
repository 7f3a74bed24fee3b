package act

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// A kind reclaim does not know (an Argo Rollout, a custom resource) is
// scaled to 0 as a Deployment is when the API server serves it with a
// /scale subresource: discovery (GET /apis, then each group's preferred
// version) finds the resource whose kind it is. A kind no group serves,
// one served without /scale, or one several groups serve with /scale (the
// owner reference the profile names carries the kind only) is left as
// notice only, the reason said.

// discoveryTTL is how long a discovery is used before it is read again
// (a loop sees a resource installed later).
const discoveryTTL = 10 * time.Minute

// scaleKinds is what discovery found: each kind's resource path prefix
// ("/apis/GROUP/VERSION"), its plural, and why it cannot be scaled ("" when
// it can).
type scaleKinds struct {
	mu    sync.Mutex
	at    time.Time
	kinds map[string]scaleKind
}

type scaleKind struct {
	prefix, resource, why string
	ambiguous             bool // several groups serve it with /scale
}

// apiGroups is the API server's group list (GET /apis).
type apiGroups struct {
	Groups []struct {
		Name             string `json:"name"`
		PreferredVersion struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"preferredVersion"`
	} `json:"groups"`
}

// apiResources is one group version's resources (GET /apis/GROUP/VERSION).
type apiResources struct {
	Resources []struct {
		Name       string `json:"name"`
		Kind       string `json:"kind"`
		Namespaced bool   `json:"namespaced"`
	} `json:"resources"`
}

// Scales says whether kind is a namespaced resource the API server serves
// with a /scale subresource, and if not, why.
func (k *Kube) Scales(ctx context.Context, kind string) (bool, string, error) {
	sk, err := k.scaleKind(ctx, kind)
	if err != nil {
		return false, "", err
	}
	return sk.why == "", sk.why, nil
}

// scaleKind is discovery's answer for kind, read again when older than
// discoveryTTL.
func (k *Kube) scaleKind(ctx context.Context, kind string) (scaleKind, error) {
	k.found.mu.Lock()
	defer k.found.mu.Unlock()
	if k.found.kinds == nil || time.Since(k.found.at) > discoveryTTL {
		kinds, err := k.discover(ctx)
		if err != nil {
			return scaleKind{}, fmt.Errorf("discover the API server's resources: %w", err)
		}
		k.found.kinds, k.found.at = kinds, time.Now()
	}
	if sk, ok := k.found.kinds[kind]; ok {
		return sk, nil
	}
	return scaleKind{why: "the API server serves no namespaced resource of kind " + kind + ": notice only"}, nil
}

// discover reads every group's preferred version and keeps, for each
// namespaced kind, where it is served and whether it has /scale.
func (k *Kube) discover(ctx context.Context) (map[string]scaleKind, error) {
	var groups apiGroups
	if err := k.W.Get(ctx, "/apis", &groups); err != nil {
		return nil, err
	}
	kinds := map[string]scaleKind{}
	for _, g := range groups.Groups {
		gv := g.PreferredVersion.GroupVersion
		if gv == "" || strings.Count(gv, "/") != 1 {
			continue
		}
		prefix := "/apis/" + gv
		var rs apiResources
		if err := k.W.Get(ctx, prefix, &rs); err != nil {
			return nil, err
		}
		scaled := map[string]bool{}
		for _, r := range rs.Resources {
			if base, ok := strings.CutSuffix(r.Name, "/scale"); ok {
				scaled[base] = true
			}
		}
		for _, r := range rs.Resources {
			if !r.Namespaced || strings.Contains(r.Name, "/") || r.Kind == "" {
				continue
			}
			kinds[r.Kind] = merge(kinds[r.Kind], scaleKind{prefix: prefix, resource: r.Name}, scaled[r.Name], gv)
		}
	}
	return kinds, nil
}

// merge adds one group's resource of a kind to what other groups serve of
// it: two that scale make it ambiguous.
func merge(had, r scaleKind, scales bool, gv string) scaleKind {
	if !scales {
		r.why = "the API server serves " + gv + " " + r.resource + " without a /scale subresource: notice only"
	}
	switch {
	case had.resource == "": // the first group that serves it
		return r
	case had.ambiguous:
		return had
	case had.why == "" && r.why == "":
		return scaleKind{resource: had.resource, ambiguous: true,
			why: "several API groups serve the kind with /scale (" + strings.TrimPrefix(had.prefix, "/apis/") + ", " + gv + "): notice only"}
	case had.why == "":
		return had
	}
	return r
}

// customPath is the API path of a custom kind's object, when it scales.
func (k *Kube) customPath(ctx context.Context, kind, ns, name string) (string, error) {
	sk, err := k.scaleKind(ctx, kind)
	if err != nil {
		return "", err
	}
	if sk.why != "" {
		return "", fmt.Errorf("%w: %s", ErrRefused, sk.why)
	}
	return sk.prefix + "/namespaces/" + url.PathEscape(ns) + "/" + sk.resource + "/" + url.PathEscape(name), nil
}
