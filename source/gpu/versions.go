package gpu

import (
	"fmt"

	"github.com/seedance/seedance/internal/nvapi"
)

// Versions reports the NVML library and driver versions, "12.550.54.15
// (driver 550.54.15)", or why there are none.
func Versions(lib NVML) string {
	if ret := lib.Init(); ret != nvapi.SUCCESS {
		if ret == nvapi.ERROR_LIBRARY_NOT_FOUND {
			return "not available (NVML library not found)"
		}
		return "not available (" + ret.Error() + ")"
	}
	defer lib.Shutdown()
	v, ret := lib.SystemGetNVMLVersion()
	if ret != nvapi.SUCCESS {
		v = "unknown"
	}
	d, ret := lib.SystemGetDriverVersion()
	if ret != nvapi.SUCCESS {
		d = "unknown"
	}
	return fmt.Sprintf("%s (driver %s)", v, d)
}
