package settings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/setting"
	"github.com/seedance/seedance/reclaim"
)

// Reclaim is the reclaim policy and its channels (docs/reclaim.md).
type Reclaim struct {
	IdleFor           time.Duration `mapstructure:"idle_for"`
	ThresholdPct      float64       `mapstructure:"threshold_pct"`
	PowerVetoW        float64       `mapstructure:"power_veto_w"`
	BusyFraction      float64       `mapstructure:"busy_fraction"`
	StartupGrace      time.Duration `mapstructure:"startup_grace"`
	MaxStaleness      time.Duration `mapstructure:"max_staleness"`
	MaxGap            time.Duration `mapstructure:"max_gap"`
	Grace             time.Duration `mapstructure:"grace"`
	Renotify          time.Duration `mapstructure:"renotify"`
	MaxActionsPerRun  int           `mapstructure:"max_actions_per_run"`
	MaxActionsPerHour int           `mapstructure:"max_actions_per_hour"`
	MaxNamespaceShare float64       `mapstructure:"max_namespace_share"`
	Window            time.Duration `mapstructure:"window"`
	Retention         time.Duration `mapstructure:"retention"`
	Namespaces        []string      `mapstructure:"namespaces"`
	ExcludeNamespaces []string      `mapstructure:"exclude_namespaces"`
	Selector          string        `mapstructure:"selector"`
	Partitions        []string      `mapstructure:"partitions"`
	ExcludePartitions []string      `mapstructure:"exclude_partitions"`
	Accounts          []string      `mapstructure:"accounts"`
	ExcludeAccounts   []string      `mapstructure:"exclude_accounts"`
	QOS               []string      `mapstructure:"qos"`
	ExcludeQOS        []string      `mapstructure:"exclude_qos"`
	AlertmanagerURL   string        `mapstructure:"alertmanager_url"`
	WebhookURL        string        `mapstructure:"webhook_url"`
	Command           []string      `mapstructure:"command"`
	Kubeconfig        string        `mapstructure:"kubeconfig"`
	Every             time.Duration `mapstructure:"every"`
	Listen            string        `mapstructure:"listen"`
}

var reclaimDefaults = reclaim.DefaultPolicy()

// reclaimKeys are reclaim's settings.
func reclaimKeys() []setting.Key {
	d := reclaimDefaults
	sd := func(v time.Duration) setting.Dur { return setting.Dur(v.String()) }
	return []setting.Key{
		{Key: "reclaim.idle_for", Default: sd(d.IdleFor), Cmd: "reclaim", Flag: "idle-for", Help: "a workload is a candidate when every GPU it holds has stayed idle this long since its last activity", Range: setting.Rng(60, setting.Span)},
		{Key: "reclaim.threshold_pct", Default: d.ThresholdPct, Cmd: "reclaim", Flag: "reclaim-threshold", Help: "a sample below this GPU utilization is idle (above dcgm's 0.5–1 % noise floor on an idle GPU)", Range: setting.Rng(0.001, 100)},
		{Key: "reclaim.power_veto_w", Default: d.PowerVetoW, Cmd: "reclaim", Flag: "power-veto", Help: "a sample drawing at least this many watts is activity whatever its utilization (0: off)", Range: setting.Rng(0, 1e5)},
		{Key: "reclaim.busy_fraction", Default: d.BusyFraction, Cmd: "reclaim", Help: "a sample is the workload's activity when more than this share of its GPUs are active (0: any one)", Range: setting.Rng(0, 0.999)},
		{Key: "reclaim.startup_grace", Default: sd(d.StartupGrace), Cmd: "reclaim", Help: "a workload that began holding its GPUs less than this long ago is spared", Range: setting.Rng(0, setting.Span)},
		{Key: "reclaim.max_staleness", Default: sd(d.MaxStaleness), Cmd: "reclaim", Help: "data whose last sample ended longer ago than this is stale: its workloads are unknown, never candidates", Range: setting.Rng(1, setting.Day)},
		{Key: "reclaim.max_gap", Default: sd(d.MaxGap), Cmd: "reclaim", Help: "samples further apart than this (or a null) inside an idle run make the workload unknown", Range: setting.Rng(0.1, setting.Day)},
		{Key: "reclaim.grace", Default: sd(d.Grace), Cmd: "reclaim", Flag: "grace", Help: "time from a delivered notice to the action", Range: setting.Rng(0, 30*setting.Day)},
		{Key: "reclaim.renotify", Default: setting.Dur("0s"), Cmd: "reclaim", Help: "send an episode's notice again after this (0: once per idle episode)", Range: setting.Rng(0, 30*setting.Day)},
		{Key: "reclaim.max_actions_per_run", Default: d.MaxActionsPerRun, Cmd: "reclaim", Help: "most actions one pass takes", Range: setting.Rng(0, 1e6)},
		{Key: "reclaim.max_actions_per_hour", Default: d.MaxActionsPerHour, Cmd: "reclaim", Help: "most actions in any hour (counted in the ledger, across replicas)", Range: setting.Rng(0, 1e6)},
		{Key: "reclaim.max_namespace_share", Default: d.MaxNamespaceShare, Cmd: "reclaim", Help: "most share of one namespace's (or Slurm account's) targets one pass acts on (at least one)", Range: setting.Rng(0, 1)},
		{Key: "reclaim.window", Default: setting.Dur("24h"), Cmd: "reclaim", Flag: "window", Help: "how much data a pass reads from a source, ending now; an idle run that began before it is shown as \"at least\"", Range: setting.Rng(60, 31*setting.Day)},
		{Key: "reclaim.retention", Default: setting.Dur("720h"), Cmd: "reclaim", Help: "finished episodes, expired keeps and audit lines older than this are deleted from the ledger", Range: setting.Rng(setting.Day, 3650*setting.Day)},
		{Key: "reclaim.namespaces", Default: []string{}, Cmd: "reclaim", Flag: "namespace", Split: true, Help: "Kubernetes namespaces reclaim may touch (default all)"},
		{Key: "reclaim.exclude_namespaces", Default: []string{"kube-system"}, Cmd: "reclaim", Flag: "exclude-namespace", Split: true, Help: "Kubernetes namespaces reclaim never touches"},
		{Key: "reclaim.selector", Default: "", Cmd: "reclaim", Flag: "workload-selector", Help: "label selector a workload must match (a=b, a!=b, a, !a; comma-separated)"},
		{Key: "reclaim.partitions", Default: []string{}, Help: "Slurm partitions reclaim may touch (default all)"},
		{Key: "reclaim.exclude_partitions", Default: []string{}, Help: "Slurm partitions reclaim never touches"},
		{Key: "reclaim.accounts", Default: []string{}, Help: "Slurm accounts reclaim may touch (default all)"},
		{Key: "reclaim.exclude_accounts", Default: []string{}, Help: "Slurm accounts reclaim never touches"},
		{Key: "reclaim.qos", Default: []string{}, Help: "Slurm QOS reclaim may touch (default all)"},
		{Key: "reclaim.exclude_qos", Default: []string{}, Help: "Slurm QOS reclaim never touches"},
		{Key: "reclaim.alertmanager_url", Default: "", Cmd: "reclaim", Flag: "alertmanager-url", Help: "Alertmanager to post notices to (/api/v2/alerts); an active silence matching a notice's alert keeps its target"},
		{Key: "reclaim.webhook_url", Default: "", Cmd: "reclaim", Flag: "webhook-url", Help: "URL to post notices to as JSON (with a Slack-compatible text)"},
		{Key: "reclaim.command", Default: []string{}, Help: "a program and its arguments (no shell) run with each notice's JSON on stdin"},
		{Key: "reclaim.every", Default: setting.Dur("0s"), Cmd: "reclaim", Flag: "every", Help: "run a pass every this long until stopped (SIGINT, SIGTERM), reading the settings again before each (0: one pass)", Range: setting.Rng(0, setting.Day)},
		{Key: "reclaim.listen", Default: "", Cmd: "reclaim", Flag: "listen", Help: "with --every: serve /metrics (candidates, notices, actions, GPU-hours and dollars reclaimed) and /healthz on this address"},
		{Key: "reclaim.kubeconfig", Default: "", Cmd: "reclaim reclaim-restore", Flag: "kubeconfig", Help: "the kubeconfig (or in-cluster) reclaim acts through: scale, job suspend, eviction (docs/reclaim.md, RBAC)"},
	}
}

// reclaimAlso says whether reclaim also takes a key of ledger update's
// (the source's, the prices', the ledger's), unless its flag is reclaim's
// own.
func reclaimAlso(k setting.Key) string {
	switch {
	case k.Key == "ledger.dsn" || k.Key == "ledger.cluster":
		return " reclaim reclaim-keep reclaim-list reclaim-restore" // keep, list and restore read the ledger too
	case slices.Contains(strings.Fields(k.Cmd), "ledger-update") && k.Flag != "kubeconfig" &&
		k.Key != "ledger.bucket" && k.Key != "ledger.step":
		return " reclaim"
	}
	return ""
}

// Policy is the reclaim policy of the settings, its selector compiled.
func (r Reclaim) Policy() (reclaim.Policy, error) {
	p := reclaim.Policy{IdleFor: r.IdleFor, ThresholdPct: r.ThresholdPct, PowerVetoW: r.PowerVetoW, BusyFraction: r.BusyFraction,
		StartupGrace: r.StartupGrace, MaxStaleness: r.MaxStaleness, MaxGap: r.MaxGap, Grace: r.Grace, Renotify: r.Renotify,
		MaxActionsPerRun: r.MaxActionsPerRun, MaxActionsPerHour: r.MaxActionsPerHour, MaxNamespaceShare: r.MaxNamespaceShare,
		Scope: reclaim.Scope{Namespaces: r.Namespaces, ExcludeNamespaces: r.ExcludeNamespaces, Selector: r.Selector,
			Partitions: r.Partitions, ExcludePartitions: r.ExcludePartitions, Accounts: r.Accounts, ExcludeAccounts: r.ExcludeAccounts,
			QOS: r.QOS, ExcludeQOS: r.ExcludeQOS}}
	if err := p.Scope.Compile(); err != nil {
		return p, fmt.Errorf("reclaim.%v", err)
	}
	return p, nil
}
