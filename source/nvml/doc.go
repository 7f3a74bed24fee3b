// Package nvml is the nvml source: the GPUs of this node, read through
// NVIDIA's NVML library. It adapts go-nvml, which needs cgo, to the pure-Go
// interfaces of internal/nvapi that the GPU sampler (source/gpu) and the
// topology reader (hwtopo) are written against. A build without cgo
// (CGO_ENABLED=0: the macOS, Windows and static Linux binaries) has every
// other source; there, New fails with ErrNotBuilt, which says so.
package nvml

import "errors"

// ErrNotBuilt is returned by New in a build without cgo.
var ErrNotBuilt = errors.New("this seedance was built without cgo, so without NVML: the nvml source needs the Linux build with NVML (see docs/sources.md); --source sim, prometheus and scrape work in every build")
