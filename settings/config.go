// Package settings is seedance's configuration: one table of keys (Keys)
// from which the flags, the SEEDANCE_* environment variables, the config
// file's schema, the ranges checked at start-up and the settings tables of
// docs/configuration.md are all made, and the typed Config they fill, one
// section type per concern, each with its Validate. A source's section is
// that source's own Settings type. cmd binds the flags; the stages read
// Config.
package settings

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/internal/setting"
	"github.com/seedance/seedance/pricing"
)

// Config is the typed configuration, filled from flags, env, file and
// defaults (Decode). A source's section is the source's own Settings
// type (SourceSettings).
type Config struct {
	Profile     Profile     `mapstructure:"profile"`
	Analyze     Analyze     `mapstructure:"analyze"`
	Attribution Attribution `mapstructure:"attribution"`
	Queues      Queues      `mapstructure:"queues"`
	Scaling     Scaling     `mapstructure:"scaling"`
	Migration   Migration   `mapstructure:"migration"`
	Slurm       Slurm       `mapstructure:"slurm"`
	Pricing     Pricing     `mapstructure:"pricing"`
	Limits      Limits      `mapstructure:"limits"`
	Ledger      Ledger      `mapstructure:"ledger"`
	Reclaim     Reclaim     `mapstructure:"reclaim"`
	// Units are the counters of work the user defines (docs/units.md),
	// checked with the file's keys (checkUnits).
	Units []WorkQuery `mapstructure:"units"`
	// sources are the sources' sections, each of its Settings type
	// (SourceSettings), by source name.
	sources map[string]reflect.Value
}

// Validate checks every range of Keys, whichever of flag, environment or
// file set the value, then what each section checks of itself.
func (c *Config) Validate() error {
	if err := c.checkRanges(); err != nil {
		return err
	}
	for _, s := range []interface{ Validate() error }{c.Profile, c.Analyze, c.Ledger, c.Slurm} {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// MinInterval is the shortest sampling interval: NVML's utilization
// counters are averaged over 1/6 s to 1 s depending on the GPU, so faster
// sampling only repeats values while costing CPU.
const MinInterval = 100 * time.Millisecond

// Profile is how seedance profile samples and writes.
type Profile struct {
	Source     string        `mapstructure:"source"`
	Interval   time.Duration `mapstructure:"interval"`
	Duration   time.Duration `mapstructure:"duration"`
	Output     string        `mapstructure:"output"`
	Checkpoint time.Duration `mapstructure:"checkpoint"`
	Quiet      bool          `mapstructure:"quiet"`
}

// Validate checks the sampling interval and the output.
func (p Profile) Validate() error {
	if p.Interval < MinInterval {
		return exit.Usagef("--interval %s is below the minimum of %s: NVML averages utilization over at least 1/6 s, so faster sampling only repeats values", p.Interval, MinInterval)
	}
	if p.Output == "" {
		return exit.Usagef("--output must name a file, or - for stdout")
	}
	return CheckOutputName("--output", p.Output)
}

// Analyze is what seedance analyze reports, how, and how often.
type Analyze struct {
	Source           string        `mapstructure:"source"`
	Report           string        `mapstructure:"report"`
	Format           string        `mapstructure:"format"`
	Output           string        `mapstructure:"output"`
	IdleThresholdPct float64       `mapstructure:"idle_threshold_pct"`
	IdleWindow       time.Duration `mapstructure:"idle_window"`
	UnderusedPct     float64       `mapstructure:"underused_pct"`
	IdleNodeShare    float64       `mapstructure:"idle_node_share"`
	StaleAfter       time.Duration `mapstructure:"stale_after"`
	FragmentRatio    float64       `mapstructure:"fragmentation_ratio"`
	Dialect          string        `mapstructure:"dialect"`
	Gates            []string      `mapstructure:"gates"`
	Every            time.Duration `mapstructure:"every"`
	Listen           string        `mapstructure:"listen"`
	GroupBy          []string      `mapstructure:"group_by"`
	Keep             int           `mapstructure:"keep"`
}

// Validate checks the report, format and dialect names, the output, and
// the attribution levels when the report has them.
func (a Analyze) Validate() error {
	// Each name is checked by the registry that owns it (internal/setting).
	if err := setting.CheckName(setting.KindReport, a.Report); err != nil {
		return &exit.UsageError{Err: err}
	}
	if err := setting.CheckName(setting.KindFormat, a.Format); err != nil {
		return &exit.UsageError{Err: fmt.Errorf("--format: %w", err)}
	}
	if err := setting.CheckName(setting.KindDialect, a.Dialect); err != nil {
		return &exit.UsageError{Err: err}
	}
	if a.Source != "" {
		if err := setting.CheckName(setting.KindSource, a.Source); err != nil {
			return &exit.UsageError{Err: err}
		}
	}
	if err := CheckOutputName("--output", a.Output); err != nil {
		return err
	}
	if a.Keep > 0 && a.Output == "-" {
		return exit.Usagef("--keep keeps dated copies of the report file: give --output FILE")
	}
	if a.Has("attribution") || a.Has("units") {
		if err := analyze.CheckGroupBy(a.GroupBy); err != nil { // the unit figures group as attribution does
			return &exit.UsageError{Err: err}
		}
	}
	return nil
}

// Has says whether the report includes a section: scaling, migration,
// fragmentation, attribution or units.
func (a Analyze) Has(section string) bool { return a.Report == section || a.Report == "all" }

// Attribution holds the holder rules' thresholds (docs/attribution.md).
type Attribution struct {
	IdleHolderUtilPct float64 `mapstructure:"idle_holder_util_pct"`
	IdleHolderHours   float64 `mapstructure:"idle_holder_hours"`
	SmallMemoryPct    float64 `mapstructure:"small_memory_pct"`
	ImbalanceIdlePct  float64 `mapstructure:"imbalance_idle_pct"`
}

// Queues holds the hoarding verdict's thresholds (docs/queues.md).
type Queues struct {
	HoardHeldPct          float64       `mapstructure:"hoard_held_pct"`
	HoardUsedPct          float64       `mapstructure:"hoard_used_pct"`
	Percentile            float64       `mapstructure:"percentile"`
	HeadroomPct           float64       `mapstructure:"headroom_pct"`
	UsageHalfLife         time.Duration `mapstructure:"usage_half_life"`
	UsageSamplingInterval time.Duration `mapstructure:"usage_sampling_interval"`
}

// Scaling is the elastic-scaling model's (docs/scaling.md).
type Scaling struct {
	Period         time.Duration      `mapstructure:"period"`
	Weights        map[string]float64 `mapstructure:"weights"`
	PreferSMActive bool               `mapstructure:"prefer_sm_active"`
	Alpha          float64            `mapstructure:"alpha"`
	TargetPct      float64            `mapstructure:"target_pct"`
	LowerPct       float64            `mapstructure:"lower_pct"`
	UpPeriods      int                `mapstructure:"up_periods"`
	DownPeriods    int                `mapstructure:"down_periods"`
	MinGPUs        int                `mapstructure:"min_gpus"`
	MaxGPUs        int                `mapstructure:"max_gpus"`
	PoolBy         string             `mapstructure:"pool_by"`
}

// Migration is what a plan may move (docs/recommend.md): settings, never
// the output dialect's, so that the plan of the same data is the same
// however it is written.
type Migration struct {
	AllowModelChange bool `mapstructure:"allow_model_change"`
	AllowSharing     bool `mapstructure:"allow_sharing"`
	MaxMovesPerNode  int  `mapstructure:"max_moves_per_node"`
	MoveJobs         bool `mapstructure:"move_jobs"`
	MovePending      bool `mapstructure:"move_pending"`
	MoveBlockers     bool `mapstructure:"move_blockers"`
	// MaxPlanAge is how long after its data ends a plan's script still
	// executes (0: no limit).
	MaxPlanAge time.Duration `mapstructure:"max_plan_age"`
}

// Slurm says whether to ask Slurm for its queue and its jobs' owners, and
// what its queues are: accounts or QOS (slurm.queues).
type Slurm struct {
	Pending bool   `mapstructure:"pending"`
	Queues  string `mapstructure:"queues"`
}

// Validate checks the name of what the Slurm queues are.
func (s Slurm) Validate() error {
	if s.Queues != "account" && s.Queues != "qos" {
		return exit.Usagef("--slurm-queues %q: give account or qos", s.Queues)
	}
	return nil
}

// Pricing is the GPU-hour and energy prices (docs/pricing.md).
type Pricing struct {
	GPUHourUSD        map[string]float64 `mapstructure:"gpu_hour_usd"`
	DefaultGPUHourUSD float64            `mapstructure:"default_gpu_hour_usd"`
	EnergyUSDPerKWh   float64            `mapstructure:"energy_usd_per_kwh"`
	PriceFile         string             `mapstructure:"price_file"`
	PreferDiscovered  bool               `mapstructure:"prefer_discovered"`
	rules             []pricing.Rule     // the price file's, read by WithFlags
}

// Ledger is where the ledger is kept and its buckets' length
// (docs/ledger.md).
type Ledger struct {
	DSN    string        `mapstructure:"dsn"`
	Bucket time.Duration `mapstructure:"bucket"`
	// Cluster is the cluster an update counts its data as ("": the one
	// the source names, else ledger.DefaultCluster).
	Cluster string `mapstructure:"cluster"`
	// Step is the longest range one update reads from Prometheus.
	Step time.Duration `mapstructure:"step"`
	// ShareIdle, when set, adds the charges to a report: none, weighted
	// or even (docs/chargeback.md); ShareIdleBy is the scope, node or
	// cluster.
	ShareIdle   string `mapstructure:"share_idle"`
	Units       bool   `mapstructure:"units"`
	Queues      bool   `mapstructure:"queues"`
	ShareIdleBy string `mapstructure:"share_idle_by"`
	// BudgetsFile is the budgets (docs/chargeback.md); ledger check fails
	// when a budget's BudgetOn (forecast or actual) reaches
	// BudgetThresholdPct of it.
	BudgetsFile string `mapstructure:"budgets_file"`
	// CarbonIntensityFile is the hourly grid intensity that prices the
	// charges' energy in emissions.
	CarbonIntensityFile string  `mapstructure:"carbon_intensity_file"`
	BudgetThresholdPct  float64 `mapstructure:"budget_threshold_pct"`
	BudgetOn            string  `mapstructure:"budget_on"`
	CheckIntegrity      bool    `mapstructure:"check_integrity"`
	// MaxLag is how far a cluster's data end may lag the others' (and
	// now) before reports, exports and checks warn, and its budgets'
	// forecasts are unknown.
	MaxLag time.Duration `mapstructure:"max_lag"`
	// ForecastMinObserved is the least time of a month a budget's
	// forecast rests on.
	ForecastMinObserved time.Duration `mapstructure:"forecast_min_observed"`
}

// Validate checks that the bucket divides a day, so that buckets meet at
// midnight UTC.
func (l Ledger) Validate() error {
	if l.Bucket > 0 && (24*time.Hour)%l.Bucket != 0 {
		return exit.Usagef("--bucket %s does not divide a day (1h, 15m, 6h, 24h do)", l.Bucket)
	}
	if l.BudgetOn != "" && l.BudgetOn != "forecast" && l.BudgetOn != "actual" {
		return exit.Usagef("--on %q is not forecast or actual", l.BudgetOn)
	}
	return nil
}

// Limits bound what a long-running seedance does with what it is given:
// expressions, external commands, HTTP clients (docs/rules.md, Budgets).
type Limits struct {
	ExprTime         time.Duration `mapstructure:"expr_time"`
	ExprMemoryMiB    int           `mapstructure:"expr_memory_mib"`
	RulesTime        time.Duration `mapstructure:"rules_time"`
	CommandTime      time.Duration `mapstructure:"command_time"`
	CommandOutputMiB int           `mapstructure:"command_output_mib"`
	HTTPTimeout      time.Duration `mapstructure:"http_timeout"`
	HTTPConnections  int           `mapstructure:"http_connections"`
}

// WithFlags overlays --gpu-price MODEL=USD entries on the file's
// gpu_hour_usd map, and reads the price file (pricing.price_file).
func (p Pricing) WithFlags(flags []string) (Pricing, error) {
	out := map[string]float64{}
	for k, v := range p.GPUHourUSD {
		out[k] = v
	}
	for _, f := range flags {
		model, price, ok := strings.Cut(f, "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(price), 64)
		if !ok || strings.TrimSpace(model) == "" || err != nil || !(v >= 0 && v <= 1e6) {
			return p, exit.Usagef("--gpu-price %q: want MODEL=USD_PER_HOUR, e.g. H100=2.49", f)
		}
		out[strings.TrimSpace(model)] = v
	}
	for _, model := range slices.Sorted(maps.Keys(out)) {
		if !pricing.Amount(out[model]) {
			return p, exit.Usagef("the price of %s, %g USD per GPU-hour: a price is 0 or from a cent (0.01) to 1e6", model, out[model])
		}
	}
	if !pricing.Amount(p.DefaultGPUHourUSD) {
		return p, exit.Usagef("--default-gpu-price %g: a price is 0 or from a cent (0.01) to 1e6", p.DefaultGPUHourUSD)
	}
	p.GPUHourUSD = out
	if p.PriceFile != "" {
		b, err := fsutil.ReadRegular(p.PriceFile, MaxFileBytes)
		if err != nil {
			return p, exit.Usagef("--price-file %s: %v", p.PriceFile, err)
		}
		if p.rules, err = pricing.ParseFile(b, p.PriceFile); err != nil {
			return p, &exit.UsageError{Err: err}
		}
	}
	return p, nil
}

// Pricer is a run's one Pricer, which every stage that prices is handed:
// the price file's rules (WithFlags reads it), then the prices by model.
func (p Pricing) Pricer() *pricing.Pricer {
	return pricing.New(p.GPUHourUSD, p.DefaultGPUHourUSD).WithRules(p.rules).PreferDiscovered(p.PreferDiscovered)
}
