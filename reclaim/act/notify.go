package act

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/seedance/seedance/internal/extcmd"
	"github.com/seedance/seedance/reclaim"
)

// Notice is one notice of an idle episode, as every channel gets it.
type Notice struct {
	Cluster      string            `json:"cluster"`
	Target       string            `json:"target"`
	Text         string            `json:"text"`
	Labels       map[string]string `json:"labels"`
	GPUs         int               `json:"gpus"`
	Model        string            `json:"model,omitempty"`
	IdleSince    time.Time         `json:"idle_since"`
	IdleFor      string            `json:"idle_for"`
	IdleGPUHours float64           `json:"idle_gpu_hours"`
	USDSoFar     float64           `json:"usd_so_far"`
	USDPerHour   float64           `json:"usd_per_hour"`
	Deadline     time.Time         `json:"deadline"`
	Action       string            `json:"action"`
}

// AlertName is the alertname of reclaim's alerts.
const AlertName = "SeedanceIdleGPUs"

// AlertLabels are the alert labels of a notice: what Alertmanager routes and
// a silence matches on.
func (n Notice) AlertLabels() map[string]string {
	out := map[string]string{"alertname": AlertName, "cluster": n.Cluster, "seedance_target": n.Target, "severity": "warning"}
	for k, v := range n.Labels {
		if k == "namespace" || k == "team" || k == "user" || k == "account" || k == "partition" {
			out[k] = v
		}
	}
	return out
}

// Notifier is one notice channel.
type Notifier interface {
	Name() string
	Notify(ctx context.Context, n Notice, now time.Time) error
	// Answered says whether the owner answered the notice through the
	// channel (a matching Alertmanager silence): its words, or "".
	Answered(ctx context.Context, n Notice, now time.Time) (string, error)
}

// maxAnswer bounds what a channel's server answers with.
const maxAnswer = 4 << 20

// Alertmanager posts notices to Alertmanager's API v2 (/api/v2/alerts)
// and takes an active silence that matches a notice's alert as its
// owner's answer (/api/v2/silences).
type Alertmanager struct {
	URL    string
	Client *http.Client
	// Hold is how long past the deadline the alert stays firing.
	Hold time.Duration
}

// Name is the channel's name.
func (a *Alertmanager) Name() string { return "alertmanager" }

// Notify posts the notice as an alert that fires until its deadline plus Hold.
func (a *Alertmanager) Notify(ctx context.Context, n Notice, now time.Time) error {
	alert := []map[string]any{{
		"labels": n.AlertLabels(),
		"annotations": map[string]string{"summary": n.Text, "usd_so_far": fmt.Sprintf("%.2f", reclaim.Cents(n.USDSoFar)),
			"usd_per_hour": fmt.Sprintf("%.2f", reclaim.Cents(n.USDPerHour)), "deadline": n.Deadline.UTC().Format(time.RFC3339),
			"idle_for": n.IdleFor, "action": n.Action},
		"startsAt": now.UTC().Format(time.RFC3339), "endsAt": n.Deadline.Add(a.Hold).UTC().Format(time.RFC3339),
	}}
	return post(ctx, a.Client, a.URL+"/api/v2/alerts", redactURL(a.URL)+"/api/v2/alerts", alert, nil)
}

// silence is what reclaim reads of an Alertmanager silence.
type silence struct {
	ID       string `json:"id"`
	Comment  string `json:"comment"`
	By       string `json:"createdBy"`
	EndsAt   string `json:"endsAt"`
	Matchers []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual *bool  `json:"isEqual"`
	} `json:"matchers"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// matches says whether every matcher of the silence matches the labels,
// as Alertmanager matches them (a regex is anchored; a missing label is
// the empty string).
func (s silence) matches(labels map[string]string) bool {
	for _, m := range s.Matchers {
		v := labels[m.Name]
		ok := v == m.Value
		if m.IsRegex {
			re, err := regexp.Compile("^(?:" + m.Value + ")$")
			if err != nil {
				return false
			}
			ok = re.MatchString(v)
		}
		if m.IsEqual != nil && !*m.IsEqual {
			ok = !ok
		}
		if !ok {
			return false
		}
	}
	return len(s.Matchers) > 0
}

// Answered finds an active silence that matches the notice's alert.
func (a *Alertmanager) Answered(ctx context.Context, n Notice, now time.Time) (string, error) {
	var sils []silence
	if err := get(ctx, a.Client, a.URL+"/api/v2/silences", redactURL(a.URL)+"/api/v2/silences", &sils); err != nil {
		return "", err
	}
	labels := n.AlertLabels()
	for _, s := range sils {
		if s.Status.State == "active" && s.matches(labels) {
			return fmt.Sprintf("silenced in Alertmanager by %s until %s (%s)", s.By, s.EndsAt, s.Comment), nil
		}
	}
	return "", nil
}

// Webhook posts a notice as JSON, with a Slack-compatible "text".
type Webhook struct {
	URL    string
	Client *http.Client
}

// Name is the channel's name.
func (w *Webhook) Name() string { return "webhook" }

// Notify posts the notice.
func (w *Webhook) Notify(ctx context.Context, n Notice, _ time.Time) error {
	return post(ctx, w.Client, w.URL, "the webhook "+hostOf(w.URL), n, nil)
}

// Answered is always "": a webhook carries no answers back.
func (w *Webhook) Answered(context.Context, Notice, time.Time) (string, error) { return "", nil }

// Command runs a program (no shell: argv as given) with the notice's JSON
// on its stdin, within the limits of external commands.
type Command struct {
	Argv   []string
	Limits extcmd.Limits
}

// Name is the channel's name.
func (c *Command) Name() string { return "command" }

// Notify runs the command.
func (c *Command) Notify(ctx context.Context, n Notice, _ time.Time) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = extcmd.RunInput(ctx, c.Limits, b, c.Argv[0], c.Argv[1:]...)
	return err
}

// Answered is always "": a command carries no answers back.
func (c *Command) Answered(context.Context, Notice, time.Time) (string, error) { return "", nil }

func post(ctx context.Context, hc *http.Client, url, shown string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("POST %s: %v", shown, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(hc, req, "POST "+shown, out)
}

func get(ctx context.Context, hc *http.Client, url, shown string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %v", shown, err)
	}
	req.Header.Set("Accept", "application/json")
	return do(hc, req, "GET "+shown, out)
}

// do sends req; errors name it as what (no credentials).
func do(hc *http.Client, req *http.Request, what string, out any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %v", what, unwrapURL(err))
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, oneLine(string(b)))
	}
	if out == nil {
		return nil
	}
	if len(b) > maxAnswer {
		return fmt.Errorf("%s: an answer larger than %d MiB", what, maxAnswer>>20)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: not the JSON expected: %v", what, err)
	}
	return nil
}
