#!/usr/bin/env bash
# Builds Kueue's controller manager (sigs.k8s.io/kueue/cmd/kueue) at a
# pinned version from the Go module proxy, with its CRDs
# (config/components/crd/bases of the same module), for the test that runs
# the real controller on the control plane of .ci/k8s-build.sh
# (k8stest.StartKueue). The binary and the CRDs go to $SEEDANCE_KUEUE_DIR
# (default /var/cache/seedance/kueue/<version>), which a later run reuses.
# Prints the directory.
set -euo pipefail
KUEUE=v0.19.2
dir=${SEEDANCE_KUEUE_DIR:-/var/cache/seedance/kueue/$KUEUE}
ready() { [ -x "$dir/bin/kueue" ] && [ -s "$dir/crds/kueue.x-k8s.io_workloads.yaml" ]; }
if ready; then echo "$dir"; exit 0; fi
mkdir -p "$dir/bin" "$dir/crds"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
# Kueue's go.mod has no replace lines: go install builds it as released.
GOBIN="$dir/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kueue/cmd/kueue@$KUEUE"
src=$(go mod download -json "sigs.k8s.io/kueue@$KUEUE" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cp "$src"/config/components/crd/bases/*.yaml "$dir/crds/"
chmod u+w "$dir"/crds/*.yaml
ready || { echo "the Kueue build left $dir incomplete" >&2; exit 1; }
echo "$dir"
