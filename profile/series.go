package profile

import "math"

// Metric identifies one column of a GPU's series.
type Metric int

// The metrics of format v1, in the order they are written.
const (
	GPUUtilPct Metric = iota
	MemBWUtilPct
	SMActivePct
	MemUsedBytes
	PCIeTxBytesPerS
	PCIeRxBytesPerS
	NVLinkTxBytesPerS
	NVLinkRxBytesPerS
	PowerW
	EnergyJ
	SMClockMHz
	TempC
	ClockEventReasons
	NumMetrics
)

var metricNames = [NumMetrics]string{
	"gpu_util_pct", "mem_bw_util_pct", "sm_active_pct", "mem_used_bytes",
	"pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s",
	"power_w", "energy_j", "sm_clock_mhz", "temp_c", "clock_event_reasons",
}

// String returns the metric's JSON name.
func (m Metric) String() string {
	if m < 0 || m >= NumMetrics {
		return "unknown"
	}
	return metricNames[m]
}

// MetricByName returns the metric with the given JSON name.
func MetricByName(name string) (Metric, bool) {
	for i, n := range metricNames {
		if n == name {
			return Metric(i), true
		}
	}
	return 0, false
}

// Series holds one GPU's samples in columns: T is seconds since the profile's
// started_at, and every present metric column has the same length as T. A NaN in
// a column is written as JSON null and means "not measured at this sample". A nil
// column is a metric the profile does not carry.
type Series struct {
	T                 Values `json:"t"`
	GPUUtilPct        Values `json:"gpu_util_pct,omitempty"`
	MemBWUtilPct      Values `json:"mem_bw_util_pct,omitempty"`
	SMActivePct       Values `json:"sm_active_pct,omitempty"`
	MemUsedBytes      Values `json:"mem_used_bytes,omitempty"`
	PCIeTxBytesPerS   Values `json:"pcie_tx_bytes_per_s,omitempty"`
	PCIeRxBytesPerS   Values `json:"pcie_rx_bytes_per_s,omitempty"`
	NVLinkTxBytesPerS Values `json:"nvlink_tx_bytes_per_s,omitempty"`
	NVLinkRxBytesPerS Values `json:"nvlink_rx_bytes_per_s,omitempty"`
	PowerW            Values `json:"power_w,omitempty"`
	EnergyJ           Values `json:"energy_j,omitempty"`
	SMClockMHz        Values `json:"sm_clock_mhz,omitempty"`
	TempC             Values `json:"temp_c,omitempty"`
	ClockEventReasons Values `json:"clock_event_reasons,omitempty"`
}

// Col returns a pointer to the column of metric m.
func (s *Series) Col(m Metric) *Values {
	switch m {
	case GPUUtilPct:
		return &s.GPUUtilPct
	case MemBWUtilPct:
		return &s.MemBWUtilPct
	case SMActivePct:
		return &s.SMActivePct
	case MemUsedBytes:
		return &s.MemUsedBytes
	case PCIeTxBytesPerS:
		return &s.PCIeTxBytesPerS
	case PCIeRxBytesPerS:
		return &s.PCIeRxBytesPerS
	case NVLinkTxBytesPerS:
		return &s.NVLinkTxBytesPerS
	case NVLinkRxBytesPerS:
		return &s.NVLinkRxBytesPerS
	case PowerW:
		return &s.PowerW
	case EnergyJ:
		return &s.EnergyJ
	case SMClockMHz:
		return &s.SMClockMHz
	case TempC:
		return &s.TempC
	case ClockEventReasons:
		return &s.ClockEventReasons
	}
	return nil
}

// Len is the number of samples.
func (s *Series) Len() int { return len(s.T) }

// Null is the in-memory value of a JSON null inside a series.
var Null = math.NaN()

// IsNull reports whether v stands for a JSON null.
func IsNull(v float64) bool { return v != v }
