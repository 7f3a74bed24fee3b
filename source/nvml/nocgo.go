//go:build !cgo

package nvml

import "github.com/seedance/seedance/internal/nvapi"

// Built tells whether this build can read GPUs through NVML.
const Built = false

// New fails: a build without cgo has no NVML.
func New() (nvapi.Library, error) { return nil, ErrNotBuilt }
