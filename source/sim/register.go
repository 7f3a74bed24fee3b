package sim

import (
	"fmt"
	"time"

	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/source"
)

// Settings are the sim section of seedance's configuration.
type Settings struct {
	Nodes    int    `mapstructure:"nodes"`
	Scenario string `mapstructure:"scenario"`
	Seed     int64  `mapstructure:"seed"`
	Realtime bool   `mapstructure:"realtime"`
	Start    string `mapstructure:"start"` // RFC 3339; DefaultStart when empty
}

// DefaultDuration is how much simulated time a run given no duration covers.
const DefaultDuration = 300 * time.Second

// keys are the source's settings, its section of the configuration
// (docs/configuration.md).
var keys = []setting.Key{
	{Key: "sim.nodes", Default: 8, Cmd: "profile analyze", Flag: "sim-nodes", Help: "number of simulated nodes (--source sim)", Range: setting.Rng(1, 10000)},
	{Key: "sim.scenario", Default: "mixed", Cmd: "profile analyze", Flag: "sim-scenario", Help: "simulated scenario: " + setting.OrList(Scenarios) + " (docs/simulator.md)"},
	{Key: "sim.seed", Default: int64(1), Cmd: "profile analyze", Flag: "sim-seed", Help: "seed of the simulation: the same seed gives the same profile byte for byte"},
	{Key: "sim.realtime", Default: false, Cmd: "profile analyze", Flag: "sim-realtime", Help: "sample the simulated cluster at wall-clock pace instead of at once"},
	{Key: "sim.start", Default: "", Cmd: "profile analyze", Flag: "sim-start", Help: "RFC 3339 time the simulated clock starts at (default 2026-01-05T09:00:00Z)", DocDefault: "2026-01-05T09:00:00Z"},
}

func init() {
	source.Register(source.Registration{Name: "sim", Wraps: true, Open: open, Settings: Settings{}, Keys: keys})
}

// open opens the simulated cluster from its settings. Its clock jumps, so
// that a simulated hour takes no wall time, unless the run keeps wall-clock
// pace (realtime, or a wrapped command, which takes real time).
func open(env source.Env) (source.Profiler, error) {
	var s Settings
	if err := env.Settings("sim", &s); err != nil {
		return nil, err
	}
	start := DefaultStart
	if s.Start != "" {
		t, err := time.Parse(time.RFC3339, s.Start)
		if err != nil {
			return nil, fmt.Errorf("%w: --sim-start %q is not an RFC 3339 time (e.g. 2026-01-05T09:00:00Z)", source.ErrSettings, s.Start)
		}
		if t.Year() < 1970 || t.Add(env.Duration).Year() >= 2200 {
			return nil, fmt.Errorf("%w: --sim-start %s: a profile's times must lie between 1970 and 2199", source.ErrSettings, s.Start)
		}
		start = t.UTC()
	}
	o := Options{Nodes: s.Nodes, Scenario: s.Scenario, Seed: s.Seed, Start: start}
	if !s.Realtime && !env.Wrapped { // the clock jumps: one node at a time
		st, err := newStreamed(o, DefaultDuration)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", source.ErrSettings, err)
		}
		return st, nil
	}
	o.Clock, o.Start = source.RealClock{}, env.Now()
	src, err := Open(o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", source.ErrSettings, err)
	}
	return source.Sampled{Source: src, Clock: o.Clock}, nil
}
