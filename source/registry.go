package source

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/seedance/seedance/internal/setting"

	"github.com/prometheus/common/config"

	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/profile"
)

// Env is what a run hands the source it opens: the source reads its own
// settings from it, as node_exporter's collectors read their own flags.
type Env struct {
	// Settings decodes the config section of that name (nvml, sim,
	// prometheus, scrape) into the source's own settings struct.
	Settings func(section string, into any) error
	// HTTP decodes a section's HTTP client settings, strictly.
	HTTP func(section string) (config.HTTPClientConfig, error)
	// NVML opens the NVML library; in a build without cgo it fails.
	NVML func() (nvapi.Library, error)
	Now  func() time.Time
	// Start and End bound a range read from history (zero when not given);
	// Duration and Interval are the run's (profile.duration and interval).
	Start, End         time.Time
	Duration, Interval time.Duration
	// Reach, when set, is read before and after a range of history as
	// context samples (docs/profile-format.md); a source that reads no
	// history ignores it.
	Reach time.Duration
	// Align, when set, is what a read of history in chunks of aggregates
	// cuts its chunks at (a ledger's buckets).
	Align time.Duration
	// Wrapped is set when the run wraps a command, which takes real time.
	Wrapped bool
	// Work asks for the workloads' counters of work done (docs/units.md):
	// a source that reads them with queries of their own reads them only
	// then (a profile written to a file, an analysis with unit figures).
	Work bool
	// Units are the counters of work the user defines (the configuration's
	// units:, docs/units.md), read beside the sources' own when Work is set.
	Units []WorkQuery
	// Log takes warnings, one line each; Progress a reader's progress
	// (nil when none is shown).
	Log      func(line string)
	Progress func(ReadProgress)
}

// ReadProgress is how far a read of history has gone: queries done of the
// total, and the GPUs and samples read so far.
type ReadProgress struct {
	Done, Total   int
	GPUs, Samples int
}

// NodeStreamer is a Profiler that can hand over its nodes a few at a
// time instead of holding the whole profile (a read of a cluster's
// history): ProfileNodes calls emit with whole nodes and returns the
// profile's header, without nodes, once it knows whether the read was
// complete.
type NodeStreamer interface {
	ProfileNodes(ctx context.Context, ro RecordOptions, emit func([]profile.Node) error) (*profile.Profile, error)
}

// Profiler is an opened source.
type Profiler interface {
	// Profile samples, or reads, until ro.Duration has passed, ctx is done
	// or ro.Stop is closed, and returns the profile.
	Profile(ctx context.Context, ro RecordOptions) (*profile.Profile, error)
	Close() error
}

// Sized is a Profiler that knows, before the run, how many nodes (or
// endpoints) and GPUs it will sample, for a progress line.
type Sized interface {
	Size() (nodes, gpus int)
}

// Sampled is the Profiler of a Source sampled by Record.
type Sampled struct {
	Source
	// Clock, when set, is the run's clock (a simulator's jumps).
	Clock Clock
	// DefaultDuration bounds a run given no duration and wrapping no
	// command (a simulated cluster is not sampled for ever).
	DefaultDuration time.Duration
}

// Size counts the inventory's nodes and GPUs.
func (s Sampled) Size() (nodes, gpus int) {
	for _, n := range s.Inventory() {
		gpus += len(n.GPUs)
	}
	return len(s.Inventory()), gpus
}

// Profile records the source.
func (s Sampled) Profile(ctx context.Context, ro RecordOptions) (*profile.Profile, error) {
	if s.Clock != nil {
		ro.Clock = s.Clock
	}
	if ro.Duration == 0 && ro.Job == nil {
		ro.Duration = s.DefaultDuration
	}
	return Record(ctx, s.Source, ro)
}

// Registration is one source of the registry.
type Registration struct {
	Name string
	// Wraps is set for sources that see this node's processes, so that
	// `profile -- CMD` can record the command's process tree.
	Wraps bool
	Open  func(Env) (Profiler, error)
	// Settings is the zero value of the source's Settings type, its
	// section of the configuration (named as the source), which Env's
	// Settings decodes; Keys are that section's settings, which the
	// source owns (their flags, defaults, help and ranges).
	Settings any
	Keys     []setting.Key
}

var (
	registryMu sync.Mutex
	registry   = map[string]Registration{}
)

// Register adds a source; each source package registers itself in init.
func Register(r Registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic("source: " + r.Name + " registered twice") // programming error
	}
	registry[r.Name] = r
	setting.RegisterSection(setting.Section{Name: r.Name, Settings: r.Settings, Keys: r.Keys})
}

// The source names are the registry's: package settings validates
// --source with them (internal/setting).
func init() {
	setting.RegisterNames(setting.KindSource, setting.Names{List: Names, Check: func(name string) error {
		_, err := Lookup(name)
		return err
	}})
}

// Names lists the registered sources, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup finds a registered source; an unknown name is an ErrSettings
// that lists the known ones.
func Lookup(name string) (Registration, error) {
	registryMu.Lock()
	r, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		list := "none is registered"
		if names := Names(); len(names) > 0 {
			list = setting.OrList(names)
		}
		return r, fmt.Errorf("%w: unknown --source %q (choose %s)", ErrSettings, name, list)
	}
	return r, nil
}

// Registered are the registered sources, by name.
func Registered() []Registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]Registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WorkQuery is one counter of work done that the user defines (the
// configuration's units:, docs/units.md).
type WorkQuery = setting.WorkQuery
