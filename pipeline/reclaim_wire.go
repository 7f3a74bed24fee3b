package pipeline

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/internal/httpc"
	"github.com/seedance/seedance/internal/kubeapi"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/reclaim"
	"github.com/seedance/seedance/reclaim/act"
	"github.com/seedance/seedance/settings"
)

// ReclaimNotifiers are the notice channels the settings name.
func ReclaimNotifiers(cfg *settings.Config) ([]act.Notifier, error) {
	rc := cfg.Reclaim
	hc := &http.Client{Timeout: cfg.Limits.HTTPTimeout, CheckRedirect: httpc.SameOrigin}
	for _, u := range []struct{ key, url string }{{"reclaim.alertmanager_url", rc.AlertmanagerURL}, {"reclaim.webhook_url", rc.WebhookURL}} {
		if u.url != "" && !strings.HasPrefix(u.url, "http://") && !strings.HasPrefix(u.url, "https://") {
			return nil, exit.Usagef("%s: %q is not an http(s) URL", u.key, u.url)
		}
	}
	var out []act.Notifier
	if rc.AlertmanagerURL != "" {
		out = append(out, &act.Alertmanager{URL: strings.TrimSuffix(rc.AlertmanagerURL, "/"), Client: hc, Hold: time.Hour})
	}
	if rc.WebhookURL != "" {
		out = append(out, &act.Webhook{URL: rc.WebhookURL, Client: hc})
	}
	if len(rc.Command) > 0 {
		out = append(out, &act.Command{Argv: rc.Command, Limits: commandLimits(cfg)})
	}
	return out, nil
}

func commandLimits(cfg *settings.Config) extcmd.Limits {
	return extcmd.Limits{Time: cfg.Limits.CommandTime, OutputBytes: int64(cfg.Limits.CommandOutputMiB) << 20}
}

// ReclaimActors are the schedulers reclaim can act on: Kubernetes through
// reclaim.kubeconfig, Slurm always (its commands run only when a Slurm
// job is acted on).
func ReclaimActors(cfg *settings.Config) (act.Actors, error) {
	a := act.Actors{Slurm: &act.Slurm{Limits: commandLimits(cfg)}}
	if kc := cfg.Reclaim.Kubeconfig; kc != "" {
		c, err := kubeapi.Load(kc, cfg.Limits.HTTPTimeout)
		if err != nil {
			return a, exit.Usagef("--kubeconfig: %v", err)
		}
		a.Kube = &act.Kube{W: c.Writer()}
	}
	return a, nil
}

// Wire gives the spec the channels and actors its settings name, and who
// runs it; a pass with neither inputs nor a source is refused.
func (spec *ReclaimSpec) Wire() error {
	if spec.Source == nil && len(spec.Inputs) == 0 {
		return exit.Usagef("nothing to read: give --source or --input")
	}
	var err error
	if spec.Notifiers, err = ReclaimNotifiers(spec.Config); err != nil {
		return err
	}
	spec.Actors, err = ReclaimActors(spec.Config)
	spec.Who = Who()
	return err
}

// Who names the user and host that run reclaim, for the audit.
func Who() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// ReclaimLine sums a pass up.
func ReclaimLine(p *ReclaimPass, execute bool) string {
	s := fmt.Sprintf("reclaim: %d targets, %d candidates, %d notices, %d acted, %d refused, %d failed",
		len(p.Assessments), p.Candidates, p.Notices, p.Actions["acted"], p.Actions["refused"], p.Actions["failed"])
	if !execute {
		s += " (dry run: nothing notified or acted on; add --execute)"
	}
	return s
}

// WriteReclaimState writes reclaim list's tables: the episodes, the keeps
// in force, and what the acted episodes freed.
func WriteReclaimState(w io.Writer, st *ReclaimState, now time.Time) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) {
		for i := range cells {
			cells[i] = table.Visible(cells[i])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	row("TARGET", "STATE", "IDLE SINCE", "GPUS", "USD/H", "NOTICED", "DEADLINE", "ACTION")
	for _, ep := range st.Episodes {
		what := ep.Action
		if what == "" {
			what = ep.LastError
		}
		if what == "" {
			what = "-"
		}
		row(ep.Target.String(), ep.State, at(ep.IdleSince), fmt.Sprint(ep.GPUs), fmt.Sprintf("%.2f", reclaim.Cents(ep.USDPerHour)),
			at(ep.NoticedAt), at(ep.Deadline), what)
	}
	_ = tw.Flush()
	sort.Slice(st.Keeps, func(i, j int) bool { return st.Keeps[i].Target.String() < st.Keeps[j].Target.String() })
	for _, k := range st.Keeps {
		fmt.Fprintln(w, table.Visible(fmt.Sprintf("keep: %s until %s by %s: %s", k.Target, at(k.Until), k.By, k.Reason)))
	}
	fmt.Fprintf(w, "reclaimed to %s: %.2f GPU-hours, $%.2f\n", at(now), st.Reclaimed.GPUHours, reclaim.Cents(st.Reclaimed.USD))
	teams := make([]string, 0, len(st.Reclaimed.ByTeam))
	for t := range st.Reclaimed.ByTeam {
		teams = append(teams, t)
	}
	sort.Strings(teams)
	for _, t := range teams {
		s := st.Reclaimed.ByTeam[t]
		fmt.Fprintln(w, table.Visible(fmt.Sprintf("  %s: %.2f GPU-hours, $%.2f", t, s.GPUHours, reclaim.Cents(s.USD))))
	}
}
