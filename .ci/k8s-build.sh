#!/usr/bin/env bash
# Builds a real Kubernetes control plane for the tests of kubectl plans
# (internal/testrig/k8stest): kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl at one version, etcd and kwok, from the Go
# module proxy (no prebuilt binaries can be downloaded here). The binaries
# and kwok's stage files go to $SEEDANCE_K8S_DIR (default
# /var/cache/seedance/k8s/<versions>), which a later run reuses: about 35
# minutes cold on two cores, nothing warm. ../shared/k8s/README.md has the
# measured recipe. Prints the directory.
set -euo pipefail
K8S=v1.36.3 ETCD=v3.6.8 KWOK=v0.8.0
dir=${SEEDANCE_K8S_DIR:-/var/cache/seedance/k8s/$K8S-etcd$ETCD-kwok$KWOK}
bins="kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok"
ready() { for b in $bins; do [ -x "$dir/bin/$b" ] || return 1; done; [ -s "$dir/kwok-stages.yaml" ]; }
if ready; then echo "$dir"; exit 0; fi
mkdir -p "$dir/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod
minor=${K8S#v1.}; minor=${minor%%.*}
ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

have() { [ -x "$dir/bin/$1" ]; }
# Kubernetes: its go.mod replaces its staging modules with folders, which
# go install refuses; a scratch module replaces each with its published
# version instead.
if ! (have kube-apiserver && have kube-controller-manager && have kube-scheduler && have kubectl); then
  mod=$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  (
    cd "$work" && mkdir kube && cd kube
    go mod init seedance.local/k8sbuild >/dev/null 2>&1
    {
      echo "require k8s.io/kubernetes $K8S"
      grep -E '^\s*k8s.io/[^ ]+ => \./staging/' "$mod" | awk -v v="v0.${K8S#v1.}" '{print "replace " $1 " => " $1 " " v}'
    } >> go.mod
    go get "k8s.io/kubernetes@$K8S" >/dev/null 2>&1 || true
    for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
      go get "k8s.io/kubernetes/cmd/$c@$K8S"
      go build -trimpath -ldflags "$ld" -o "$dir/bin/$c" "k8s.io/kubernetes/cmd/$c"
    done
  )
fi
# etcd and kwok, each in a module of its own (inside the Kubernetes one
# kwok would raise shared dependencies and rebuild everything).
if ! have etcd; then
  (
    cd "$work" && mkdir etcd && cd etcd
    go mod init seedance.local/etcdbuild >/dev/null 2>&1
    go get "go.etcd.io/etcd/server/v3@$ETCD"
    go build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
  )
fi
if ! have kwok || [ ! -s "$dir/kwok-stages.yaml" ]; then
  (
    cd "$work" && mkdir kwok && cd kwok
    go mod init seedance.local/kwokbuild >/dev/null 2>&1
    go get "sigs.k8s.io/kwok/cmd/kwok@$KWOK"
    have kwok || go build -trimpath -ldflags "-s -w" -o "$dir/bin/kwok" sigs.k8s.io/kwok/cmd/kwok
    # The stages that play kubelets: nodes Ready at once and kept so by a
    # heartbeat, pods Running at once (a Job's pods complete), deletions
    # done. The bare binary has none.
    src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
    stages=""
    for s in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
      f="$src/kustomize/stage/$s.yaml"
      [ -s "$f" ] || { echo "kwok $KWOK has no stage $s" >&2; exit 1; }
      stages="$stages$(cat "$f")"$'\n---\n'
    done
    printf '%s' "$stages" > "$dir/kwok-stages.yaml.tmp" && mv "$dir/kwok-stages.yaml.tmp" "$dir/kwok-stages.yaml"
  )
fi
ready || { echo "the control plane's build left $dir incomplete" >&2; exit 1; }
echo "$dir"
