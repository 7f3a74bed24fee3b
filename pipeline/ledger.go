package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/ledger"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/render"
	"github.com/seedance/seedance/settings"
)

// LedgerUpdateSpec is one `seedance ledger update`: the profiles to count,
// in time order.
type LedgerUpdateSpec struct {
	Config *settings.Config
	Inputs []string
	Stdin  io.Reader
}

// LedgerUpdate counts the inputs' new data into the ledger
// (docs/ledger.md).
func LedgerUpdate(ctx context.Context, spec LedgerUpdateSpec) (ledger.Updated, error) {
	cfg := spec.Config
	if cfg.Ledger.DSN == "" {
		return ledger.Updated{}, exit.Usagef("no ledger: give --ledger PATH (an embedded database) or --ledger postgres://…")
	}
	if len(spec.Inputs) == 0 {
		return ledger.Updated{}, exit.Usagef("no input: give the profiles to count with --input FILE (repeatable, in time order)")
	}
	var inputs []*profile.Profile
	for _, name := range spec.Inputs {
		p, err := profile.ReadFile(name, spec.Stdin)
		if err != nil {
			return ledger.Updated{}, err
		}
		inputs = append(inputs, p)
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN)
	if err != nil {
		return ledger.Updated{}, err
	}
	defer l.Close()
	return l.Update(ctx, ledger.UpdateSpec{Inputs: inputs, Params: Params(cfg, cfg.Pricing.Pricer()), Bucket: cfg.Ledger.Bucket})
}

// LedgerReportSpec is one `seedance ledger report`.
type LedgerReportSpec struct {
	Config         *settings.Config
	Since, Until   time.Time
	Format, Output string
}

// LedgerReport answers from the ledger alone and writes the report.
func LedgerReport(ctx context.Context, spec LedgerReportSpec, stdout io.Writer) error {
	cfg := spec.Config
	if cfg.Ledger.DSN == "" {
		return exit.Usagef("no ledger: give --ledger PATH or --ledger postgres://…")
	}
	if err := fsutil.CheckOutput(spec.Output, cfg.Ledger.DSN); err != nil {
		return exit.Usagef("--output: %v", err)
	}
	l, err := ledger.Open(ctx, cfg.Ledger.DSN)
	if err != nil {
		return err
	}
	defer l.Close()
	r, err := l.Report(ctx, ledger.Query{Since: spec.Since, Until: spec.Until, GroupBy: cfg.Analyze.GroupBy, EnergyUSDPerKWh: cfg.Pricing.EnergyUSDPerKWh})
	if err != nil {
		return err
	}
	if spec.Output == "-" || spec.Output == "" {
		return render.Ledger(stdout, r, spec.Format)
	}
	return fsutil.WriteAtomic(spec.Output, func(w io.Writer) error { return render.Ledger(w, r, spec.Format) })
}

// LedgerLine is the one line an update prints.
func LedgerLine(u ledger.Updated) string {
	if u.Nothing {
		return fmt.Sprintf("ledger: nothing after %s: the ledger is unchanged", u.DataEnd.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("ledger: settled %s → %s; provisional to %s (%d rows)", u.From.UTC().Format(time.RFC3339), u.Watermark.UTC().Format(time.RFC3339),
		u.DataEnd.UTC().Format(time.RFC3339Nano), u.Rows)
}
