package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seedance/seedance/chargeback"
	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/pipeline"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/settings"
)

func newLedgerCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "ledger",
		Short: "Keep the history of idle GPU time, and report on any window of it",
		Long: `Keep seedance's history in a ledger (an embedded SQLite file, or PostgreSQL):
per hour, node, GPU model and workload, the GPU-hours held, used and idle,
their cost and energy. Each update reads only what came after the last one
and commits in one transaction; the totals of any window equal one analyze
of all its data (docs/ledger.md).`,
		Example: `  seedance ledger update --ledger seedance.db -i day1.json.gz -i day2.json.gz
  seedance ledger report --ledger seedance.db --since 2026-01-05 --group-by team=team`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newLedgerUpdateCmd(f), newLedgerReportCmd(f), newLedgerExportCmd(f), newLedgerCheckCmd(f), newLedgerRenameCmd(f))
	return c
}

func newLedgerUpdateCmd(f *Factory) *cobra.Command {
	var inputs []string
	var rf recordFlags
	c := &cobra.Command{
		Use:   "update --ledger DSN --input PROFILE...",
		Short: "Count the profiles' new data into the ledger",
		Long: `Count the profiles' new data into the ledger, in one transaction: what lies
at or before the ledger's end was counted before and is left out, so that
running an update twice counts nothing twice, and a killed update leaves the
ledger as it was. The last minutes stay provisional until the next update
brings what settles them (an idle run still open, a sample's coverage).

--source reads a source instead, as seedance analyze --source does: with
--source prometheus (and --pushdown), the range read starts where the
ledger's data ends, so each sample is read once, ever.`,
		Example: `  seedance ledger update --ledger seedance.db -i profile.json
  seedance ledger update --ledger seedance.db --source prometheus --prometheus-url http://prometheus:9090 --pushdown
  seedance ledger update --ledger seedance.db -i day1.json.gz -i day2.json.gz --gpu-price H100=2.49`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.PricedConfig()
			if err != nil {
				return err
			}
			spec := pipeline.LedgerUpdateSpec{Config: cfg, Inputs: inputs, Stdin: f.IO.In}
			if spec.Source, err = rf.sourceSpec(f, cfg, 0); err != nil {
				return err
			}
			up, err := pipeline.LedgerUpdate(c.Context(), spec)
			if err != nil {
				return err
			}
			for _, w := range up.Warnings {
				fmt.Fprintln(f.IO.ErrOut, "warning: "+table.Visible(w))
			}
			fmt.Fprintln(f.IO.ErrOut, pipeline.LedgerLine(up))
			return nil
		},
	}
	c.Flags().StringArrayVarP(&inputs, "input", "i", nil, "profile to count, in time order (repeatable); - reads stdin")
	addSettingFlags(c, "ledger")
	addSettingFlags(c, "ledger-update")
	rf.add(c, "with --source prometheus: start of the range (RFC 3339; default where the ledger's data ends)", "with --source prometheus: end of the range (RFC 3339; default now)",
		"with --source: an nvidia-smi topo -m capture, FILE for every node or NODE=FILE (repeatable)")
	return c
}

// ledgerReportFlags are ledger report's own flags.
type ledgerReportFlags struct {
	since, until, baseSince, baseUntil, baseReport, format, output string
	groupBy, clusters                                              []string
}

func (lf *ledgerReportFlags) add(c *cobra.Command) {
	lf.addWindow(c, render.LedgerFormats, "report")
	fl := c.Flags()
	fl.StringVar(&lf.baseSince, "baseline-since", "", "compare with the window that starts here (as --since): energy per job, training utilization, idle cost")
	fl.StringVar(&lf.baseUntil, "baseline-until", "", "the end of the baseline window (exclusive)")
	fl.StringVar(&lf.baseReport, "baseline-report", "", "compare with a report instead: a ledger report's JSON, or analyze's (idle cost and ratio only)")
}

// addWindow adds the flags of a window of the ledger: its times, the
// output (formats, the first the default) and the grouping.
func (lf *ledgerReportFlags) addWindow(c *cobra.Command, formats []string, what string) {
	fl := c.Flags()
	fl.StringVar(&lf.since, "since", "", "the first bucket: RFC 3339, a date, month, today or a span back (7d); default: the ledger's first")
	fl.StringVar(&lf.until, "until", "", "the end of the window (exclusive), as --since; default: the ledger's end")
	fl.StringVarP(&lf.format, "format", "f", formats[0], what+" format: "+strings.Join(formats, ", "))
	fl.StringVarP(&lf.output, "output", "o", "-", "write the "+what+" to this file (atomically); - is stdout")
	fl.StringArrayVar(&lf.groupBy, "group-by", nil, "group levels, outermost first: cluster, namespace, workload, controller, user, account, model or team=LABEL (repeatable; default namespace)")
	fl.StringArrayVar(&lf.groupBy, "by", nil, "the same as --group-by")
	fl.StringArrayVar(&lf.clusters, "cluster", nil, what+" only this cluster (repeatable; default every cluster in the ledger)")
	completeValues(c, "format", formats)
}

// spec reads the flags' times against now.
func (lf *ledgerReportFlags) spec(cfg *settings.Config, now time.Time) (pipeline.LedgerReportSpec, error) {
	spec := pipeline.LedgerReportSpec{Config: cfg, Format: lf.format, Output: lf.output, Clusters: lf.clusters, BaselineReport: lf.baseReport, Now: now}
	for _, t := range []struct {
		flag, v string
		to      *time.Time
	}{{"--since", lf.since, &spec.Since}, {"--until", lf.until, &spec.Until},
		{"--baseline-since", lf.baseSince, &spec.BaselineSince}, {"--baseline-until", lf.baseUntil, &spec.BaselineUntil}} {
		var err error
		if *t.to, err = when(t.flag, t.v, now); err != nil {
			return spec, err
		}
	}
	if len(lf.groupBy) > 0 {
		cfg.Analyze.GroupBy = lf.groupBy
	}
	return spec, settings.CheckOutputName("--output", lf.output)
}

func newLedgerReportCmd(f *Factory) *cobra.Command {
	var lf ledgerReportFlags
	c := &cobra.Command{
		Use:   "report --ledger DSN [--since T] [--until T] [--cluster NAME] [--by LEVEL]",
		Short: "Report idle GPU time, cost and energy from the ledger alone",
		Long: `Report from the ledger alone: the summary and the attribution of analyze's
report over the whole buckets that begin in [--since, --until), and one line
per day; the mean energy of the jobs that finished in it, and the
utilization of training apart from inference. A ledger of several clusters
reports all of them, or those --cluster names; --by cluster groups by them.
With --baseline-since and --baseline-until, the window is compared with the
baseline window; with --baseline-report, with a report kept from before (a
ledger report's JSON, or analyze's). A time is RFC 3339, a date
(2026-12-01, midnight UTC), "month" (the first of this month), "today", or a
span back from now (7d, 36h). The ledger is opened read-only: a report runs
beside an update, and never creates a ledger.`,
		Example: `  seedance ledger report --ledger seedance.db --since month --group-by namespace
  seedance ledger report --ledger seedance.db --since month --by cluster --by team=team
  seedance ledger report --ledger seedance.db --since 2026-01-05 --until 2026-01-07 -f csv -o week.csv`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			spec, err := lf.spec(cfg, f.Now())
			if err != nil {
				return err
			}
			return pipeline.LedgerReport(c.Context(), spec, f.IO.Out)
		},
	}
	lf.add(c)
	addSettingFlags(c, "ledger")
	addSettingFlags(c, "ledger-report")
	return c
}

func newLedgerExportCmd(f *Factory) *cobra.Command {
	var lf ledgerReportFlags
	var account, version string
	c := &cobra.Command{
		Use:   "export --ledger DSN --format focus [--since T] [--until T] [-o FILE]",
		Short: "Export the charges of a window as FOCUS 1.3 rows (split cost allocation)",
		Long: `Export the charges of the whole buckets that begin in [--since, --until) as
FOCUS 1.3 rows (the FinOps Foundation's cost and usage format), in CSV or
Parquet, with split cost allocation: each node's GPU time of a GPU model and
day is an origin charge at its price, and the rows are its allocated
charges: each workload's held time, the shares of the node's unallocated
time that --share-idle gives the groups of its scope (--share-idle-by), and
what stays unallocated; their AllocatedRatio sums to 1 and their costs to the
origin's, to the cent. BilledCost sums to the ledger report's total for the
same window and rule. --focus-version 1.2 writes FOCUS 1.2 instead: a row per
day, cluster, node, GPU model and workload (docs/chargeback.md).`,
		Example: `  seedance ledger export --ledger seedance.db --format focus --since month -o focus.csv
  seedance ledger export --ledger seedance.db --format focus --since 2026-11-01 --until 2026-12-01 --share-idle weighted --by team=team -o november.csv`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			rs, err := lf.spec(cfg, f.Now())
			if err != nil {
				return err
			}
			spec := pipeline.LedgerExportSpec{Config: cfg, Since: rs.Since, Until: rs.Until, Clusters: rs.Clusters, Format: lf.format, Output: lf.output, Account: account, Now: rs.Now,
				Version: version}
			done, err := pipeline.LedgerExport(c.Context(), spec, f.IO.Out)
			if err == nil {
				for _, w := range done.Warnings {
					fmt.Fprintln(f.IO.ErrOut, "warning: "+table.Visible(w))
				}
				fmt.Fprintf(f.IO.ErrOut, "export: BilledCost sums to %.2f USD; data through %s\n", done.BilledUSD, render.DataEnds(done.DataEnds))
			}
			return err
		},
	}
	lf.addWindow(c, pipeline.LedgerExportFormats, "export")
	c.Flags().StringVar(&account, "billing-account", "gpu-platform", "the billing account, invoice issuer and provider the rows name: the platform that owns the GPUs")
	c.Flags().StringVar(&version, "focus-version", chargeback.FocusVersions[0], "the FOCUS version written: 1.3 (each node's GPU time an origin charge split among its holders, the unallocated time and the groups it is shared with) or 1.2 (a row per node, model and workload)")
	addSettingFlags(c, "ledger")
	addSettingFlags(c, "ledger-export")
	return c
}

func newLedgerCheckCmd(f *Factory) *cobra.Command {
	var clusters []string
	c := &cobra.Command{
		Use:   "check --ledger DSN [--budgets FILE] [--fail-at PCT] [--on forecast|actual] [--integrity]",
		Short: "Fail (exit 3) when a budget's forecast or actual crosses a threshold; check the ledger's integrity",
		Long: `Check the budgets (a YAML file: by, key, monthly, currency, from) against the ledger: for the month
of its data end, each group's charges so far (by --share-idle) and the month-end forecast from the
month's own run rate. A line per budget, "ok" or "OVER"; exit status 3 when any budget's forecast
(or actual, --on actual) reaches --fail-at percent of it, or has no forecast (no data of the month
yet): for cron and CI (docs/chargeback.md, Budgets). --integrity first runs the database's own full
check of every page and index, a line per problem, exit 1 on any (docs/ledger.md, Integrity).`,
		Example: `  seedance ledger check --ledger seedance.db --budgets budgets.yaml --integrity
  seedance ledger check --ledger seedance.db --budgets budgets.yaml --fail-at 90 --share-idle weighted --on actual`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			warn := func(w string) { fmt.Fprintln(f.IO.ErrOut, "warning: "+table.Visible(w)) }
			return pipeline.LedgerCheck(c.Context(), pipeline.LedgerCheckSpec{Config: cfg, Clusters: clusters, Now: f.Now(), Warn: warn}, f.IO.Out)
		},
	}
	c.Flags().StringArrayVar(&clusters, "cluster", nil, "check only this cluster's charges (repeatable; default every cluster in the ledger)")
	addSettingFlags(c, "ledger")
	addSettingFlags(c, "ledger-check")
	addSettingFlags(c, "ledger-export") // the sharing rule
	return c
}

func newLedgerRenameCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "rename-cluster --ledger DSN FROM TO",
		Short: "Give a cluster of the ledger another name",
		Long: `Give a cluster of the ledger, its rows and its state, another name, in one
transaction: a ledger migrated to schema 4 without --cluster holds its history
as cluster "default"; rename it to the name its updates give from now on
(--cluster, or the cluster label of the series they read). The new name must
not be taken.`,
		Example: `  seedance ledger rename-cluster --ledger cluster.db train-a prod-eu`,
		Args:    cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if err := pipeline.LedgerRenameCluster(c.Context(), cfg, args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "ledger: cluster %s is now %s\n", table.Visible(args[0]), table.Visible(args[1]))
			return nil
		},
	}
	addSettingFlags(c, "ledger")
	return c
}

// maxSpanDays is the longest span back --since and --until take.
const maxSpanDays = 36500

// when reads a --since or --until value ("" is the zero time).
func when(flag, v string, now time.Time) (time.Time, error) {
	now = now.UTC()
	switch v {
	case "":
		return time.Time{}, nil
	case "month":
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), nil
	case "today":
		return now.Truncate(24 * time.Hour), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			if t.Year() < 1970 || t.Year() > 2199 {
				return time.Time{}, exit.Usagef("%s %q: a time from 1970 to 2199", flag, v)
			}
			return t, nil
		}
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			if n > maxSpanDays {
				return time.Time{}, exit.Usagef("%s %q: a span back of at most %d days (100 years)", flag, v, maxSpanDays)
			}
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		if d > maxSpanDays*24*time.Hour {
			return time.Time{}, exit.Usagef("%s %q: a span back of at most %d days (100 years)", flag, v, maxSpanDays)
		}
		return now.Add(-d), nil
	}
	return time.Time{}, exit.Usagef("%s %q: give an RFC 3339 time, a date (2026-12-01), month, today or a span back (7d, 36h)", flag, v)
}
