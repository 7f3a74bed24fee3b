package ledger

import (
	"fmt"
	"math"
	"time"

	"github.com/seedance/seedance/analyze"
)

// A report checks each figure it reads against its physical bounds, so
// that a damaged ledger (a flipped byte, a hand edit) is an error naming
// the row, never a number in a report.

// maxGPUsPerNode bounds the GPUs of one node's rows (a rack-scale node
// holds 72), and maxWattsPerGPU a GPU's power (a B200 draws 1.2 kW).
const (
	maxGPUsPerNode = 1024
	maxWattsPerGPU = 5000.0
)

// slack absorbs the rounding of sums.
func slack(x float64) float64 { return 1e-6 * math.Max(1, math.Abs(x)) }

// plausibleGPU checks one GPU row (an hourly bucket, or a daily rollup's
// day) of the span: every figure finite and at least 0; at most the
// window's length × maxGPUsPerNode GPU-seconds observed; idle and covered
// utilization within observed; utilization within 0–100 %; energy within
// maxWattsPerGPU over the GPU-seconds the row can hold.
func plausibleGPU(cluster string, at int64, node, model string, sp span, observed, idle, util, covered, cost, energy float64) error {
	length := float64(sp.hi - sp.lo) // a row is at most the window long
	most := length * maxGPUsPerNode
	why := ""
	for _, v := range []float64{observed, idle, util, covered, cost, energy} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < -slack(v) {
			why = "a figure that is not a number, or below 0"
		}
	}
	switch {
	case why != "":
	case observed > most:
		why = fmt.Sprintf("%.6g GPU-hours observed, more than %d GPUs could in %.6g h", observed/3600, maxGPUsPerNode, length/3600)
	case idle > observed+slack(observed):
		why = fmt.Sprintf("%.6g idle GPU-hours of %.6g observed", idle/3600, observed/3600)
	case covered > observed+slack(observed):
		why = fmt.Sprintf("utilization covering %.6g GPU-hours of %.6g observed", covered/3600, observed/3600)
	case util > covered+slack(covered):
		why = fmt.Sprintf("utilization of %.6g %%", 100*util/covered)
	case energy > most*maxWattsPerGPU:
		why = fmt.Sprintf("%.6g kWh, more than %d GPUs of %g W could draw", energy/3.6e6, maxGPUsPerNode, maxWattsPerGPU)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: the row of cluster %s, node %s, %s at %s is not plausible (%s): the ledger is damaged",
		ErrLedger, cluster, node, model, time.Unix(at, 0).UTC().Format(time.RFC3339), why)
}

// plausible checks the workloads' sums of the window against the GPUs':
// each finite and at least 0, used and idle within held, and all that was
// held within what was observed.
func plausible(rows []workloadRow, total analyze.Held, sp span) error {
	held := 0.0
	for _, r := range rows {
		bad := ""
		for _, v := range []float64{r.held, r.used, r.idle, r.cost, r.energy} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < -slack(v) {
				bad = "a figure that is not a number, or below 0"
			}
		}
		switch {
		case bad != "":
		case r.used > r.held+slack(r.held):
			bad = fmt.Sprintf("%.6g GPU-hours used of %.6g held", r.used/3600, r.held/3600)
		case r.idle > r.held+slack(r.held):
			bad = fmt.Sprintf("%.6g idle GPU-hours of %.6g held", r.idle/3600, r.held/3600)
		}
		if bad != "" {
			return fmt.Errorf("%w: the rows of cluster %s, %s in %s are not plausible (%s): the ledger is damaged",
				ErrLedger, r.cluster, rowName(r), windowName(sp), bad)
		}
		held += r.held
	}
	if obs := total.HeldH * 3600; held > obs+slack(obs) {
		return fmt.Errorf("%w: the workloads held %.6g GPU-hours in %s, more than the %.6g observed: the ledger is damaged",
			ErrLedger, held/3600, windowName(sp), total.HeldH)
	}
	return nil
}

func rowName(r workloadRow) string {
	switch {
	case r.unallocated():
		return "what no workload held"
	case r.owner != nil:
		return fmt.Sprintf("the workloads of owner %d", r.owner.id)
	}
	return "workload " + r.w.ID
}

func windowName(sp span) string {
	return time.Unix(sp.lo, 0).UTC().Format(time.RFC3339) + " → " + time.Unix(sp.hi, 0).UTC().Format(time.RFC3339)
}

// plausibleState checks a cluster's state as read: buckets that divide a
// day, and first ≤ watermark, first ≤ data end + 1 ms (a new cluster's
// data end lies a millisecond before its first), in Unix ms.
func plausibleState(cluster string, first, wm, end, bucket int64) error {
	if bucket <= 0 || 86400%bucket != 0 || wm < first || end < first-1 {
		return fmt.Errorf("cluster %s's state is not plausible (bucket %d s, first %d, watermark %d, data end %d ms): the ledger is damaged",
			cluster, bucket, first, wm, end)
	}
	return nil
}
