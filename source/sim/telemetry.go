package sim

import (
	"math"
	"sync"
	"time"

	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/source"
)

// simRole is how a simulated GPU behaves over time.
type simRole int

const (
	roleIdle simRole = iota
	roleTrain
	roleInfer
	roleSpiky
)

// simModel holds the value ranges of one GPU model, taken from the real idle and
// load captures in shared/realdata/nvidia-smi (an idle H100 draws ~69 W at
// 345 MHz, a loaded one ~630 W at 1980 MHz).
type simModel struct {
	idleW, maxW       float64
	idleMHz, maxMHz   float64
	idleTemp          float64
	nvlinkBytesPerSec float64 // per direction at full training load
	gpm               bool    // Hopper and newer have GPM
}

// simGPU generates one GPU's telemetry as a function of simulated time. The
// values are pure functions of (seed, node, GPU, second) except the
// cumulative counters, which integrate their rates between calls.
type simGPU struct {
	clock       source.Clock
	start       time.Time
	seed        uint64
	node, index int
	model       simModel
	role        simRole
	memTotal    float64
	noFields    bool // PCIe/NVLink counters and temperature unsupported
	procs       []nvapi.ProcessInfo

	mu                         sync.Mutex
	lastT                      float64
	energyMJ                   float64
	pcieTx, pcieRx, nvTx, nvRx float64
}

func (g *simGPU) now() float64 { return g.clock.Now().Sub(g.start).Seconds() }

// noise returns a deterministic value in [0,1) for (GPU, channel, second).
func (g *simGPU) noise(ch uint64, sec float64) float64 {
	return hash01(g.seed, uint64(g.node), uint64(g.index), ch, uint64(int64(math.Floor(sec))))
}

// util is the GPU utilization in percent at time t.
func (g *simGPU) util(t float64) float64 {
	sec := math.Floor(t)
	n := g.noise(1, sec)
	switch g.role {
	case roleTrain:
		// A checkpoint every 15 minutes, at a phase that depends on the node.
		phase := math.Floor(hash01(g.seed, uint64(g.node), 0, 12, 0) * 900)
		if math.Mod(sec+phase, 900) < 25 {
			return math.Round(2 + 4*n)
		}
		return math.Min(100, math.Round(91+10*n))
	case roleInfer:
		phase := float64(g.index) * 0.7
		v := 28 + 14*math.Sin(2*math.Pi*t/1200+phase) + 10*(n-0.5)
		return math.Round(math.Max(0, math.Min(100, v)))
	case roleSpiky:
		// Every 5 minutes the whole node runs a 20-second burst at a start
		// that depends on the node and the period, not on the GPU.
		period := math.Floor(sec / 300)
		off := math.Floor(hash01(g.seed, uint64(g.node), 0, 7, uint64(period)) * 260)
		if s := math.Mod(sec, 300); s >= off && s < off+20 {
			return math.Round(60 + 35*n)
		}
	}
	if n < 0.04 {
		return 1
	}
	return 0
}

func (g *simGPU) memUsed(t float64) float64 {
	n := g.noise(2, t)
	frac := 0.0
	switch g.role {
	case roleTrain:
		frac = 0.86 + 0.04*n
	case roleInfer:
		frac = 0.32 + 0.02*n
	case roleSpiky:
		frac = 0.12
	}
	return math.Round(frac*g.memTotal/(1<<20)) * (1 << 20)
}

func (g *simGPU) memBW(t float64) float64 {
	u := g.util(t)
	if g.role == roleTrain && u > 50 {
		return math.Round(45 + 20*g.noise(3, t))
	}
	return math.Round(u * (0.35 + 0.1*g.noise(3, t)))
}

func (g *simGPU) power(t float64) float64 {
	u := g.util(t) / 100
	return g.model.idleW + (0.92*g.model.maxW-g.model.idleW)*u + 6*g.noise(4, t)
}

func (g *simGPU) rates(t float64) (pcieTx, pcieRx, nvTx, nvRx float64) {
	u := g.util(t) / 100
	n := g.noise(5, t)
	pcieTx = 2e5 + u*(1.5e9+2e9*n)
	pcieRx = 4e5 + u*(3e9+3e9*n)
	if g.role == roleTrain {
		nv := u * g.model.nvlinkBytesPerSec * (0.6 + 0.4*n)
		return pcieTx, pcieRx, nv, nv * (0.97 + 0.06*g.noise(6, t))
	}
	return pcieTx, pcieRx, 0, 0
}

// advance integrates power and the byte counters up to time t.
func (g *simGPU) advance(t float64) {
	if t <= g.lastT {
		return
	}
	dt := t - g.lastT
	g.energyMJ += g.power(g.lastT) * dt * 1e3
	a, b, c, d := g.rates(g.lastT)
	g.pcieTx += a * dt
	g.pcieRx += b * dt
	g.nvTx += c * dt / 1024
	g.nvRx += d * dt / 1024
	g.lastT = t
}

// fieldValues reads the PCIe and NVLink byte counters, as NVML does.
func (g *simGPU) fieldValues(vals []nvapi.FieldValue) nvapi.Return {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.now()
	g.advance(t)
	ts := g.start.UnixMicro() + int64(math.Round(t*1e6))
	for i := range vals {
		f := &vals[i]
		f.Timestamp = ts
		if g.noFields {
			f.Return = nvapi.ERROR_NOT_SUPPORTED
			continue
		}
		f.Return = nvapi.SUCCESS
		switch f.FieldId {
		case nvapi.FI_DEV_PCIE_COUNT_TX_BYTES:
			f.Value, f.Bits = uint64(g.pcieTx), 64
		case nvapi.FI_DEV_PCIE_COUNT_RX_BYTES:
			f.Value, f.Bits = uint64(g.pcieRx), 64
		case nvapi.FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
			f.Value, f.Bits = uint64(g.nvTx), 64
		case nvapi.FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
			f.Value, f.Bits = uint64(g.nvRx), 64
		default:
			f.Return = nvapi.ERROR_NOT_SUPPORTED
		}
	}
	return nvapi.SUCCESS
}

// hash01 maps its inputs to a uniform value in [0,1) (splitmix64).
func hash01(xs ...uint64) float64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range xs {
		h ^= x + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = splitmix(h)
	}
	return float64(h>>11) / (1 << 53)
}

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
