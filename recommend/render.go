package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/internal/yamlout"
)

var slurmJobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

var q = shell.Quote

// Dialects are the forms a plan is written in.
var Dialects = []string{"kubectl", "slurm", "json", "yaml"}

// For returns the writer of a dialect: kubectl (a bash script), slurm or
// json.
func For(dialect string) (func(io.Writer, *Plan) error, error) {
	switch dialect {
	case "kubectl":
		return kubectlScript, nil
	case "slurm":
		return slurmScript, nil
	case "json":
		return planJSON, nil
	case "yaml":
		return planYAML, nil
	}
	return nil, fmt.Errorf("unknown --dialect %q (choose %s)", dialect, strings.Join(Dialects, ", "))
}

// planYAML writes the JSON plan as YAML, keys in the same order.
func planYAML(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	if err := planJSON(&b, p); err != nil {
		return err
	}
	return yamlout.FromJSON(w, b.Bytes())
}

// planJSON writes the plan for automation (docs/plan-v1.schema.json).
func planJSON(w io.Writer, p *Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// freshness writes the check of the plan's age: run later than MaxAgeS
// after its data ends, the script refuses to execute (exit 3, before any
// command) unless --stale-ok, and warns in a dry run. A plan without an
// age gets MAX_AGE=0: never stale.
func freshness(b *strings.Builder, p *Plan) {
	if p.DataUntil == nil || p.MaxAgeS <= 0 {
		b.WriteString("# The plan has no max age (simulated data, or migration.max_plan_age 0).\nDATA_UNTIL=0\nMAX_AGE=0\n")
	} else {
		fmt.Fprintf(b, "# The plan's data ends at %s; its max age is %.0f s (migration.max_plan_age).\nDATA_UNTIL=%d\nMAX_AGE=%.0f\n",
			p.DataUntil.UTC().Format(time.RFC3339), p.MaxAgeS, p.DataUntil.Unix(), p.MaxAgeS)
	}
	b.WriteString(freshnessSh)
}

// scripted splits a plan's moves into those the script carries out and
// those it cannot (a name fails the dialect's check), and lists the nodes
// that can be released: a node is released only when every move off it is
// in the script. A move off a node that cannot be released is held back
// too: moving part of a node's work frees nothing.
type scripted struct {
	skip    map[int]string // move index → why it is left out
	release []string
	held    map[string]bool // released in the plan, not in the script
}

func planScript(p *Plan, valid func(Move) bool, validNode func(string) bool) scripted {
	s := scripted{skip: map[int]string{}, held: map[string]bool{}}
	for i, m := range p.Moves {
		if !valid(m) {
			s.skip[i] = "a node, namespace, pod or job name here is not valid"
			if m.From != nil {
				s.held[*m.From] = true
			}
		}
	}
	for i, m := range p.Moves {
		if _, bad := s.skip[i]; !bad && m.From != nil && s.held[*m.From] {
			s.skip[i] = "another move off " + *m.From + " was skipped, so that node stays and this workload with it"
		}
	}
	for _, n := range p.ReleasedNodes {
		if !s.held[n] && validNode(n) {
			s.release = append(s.release, n)
		} else {
			s.held[n] = true
		}
	}
	return s
}

// header writes the script's first lines: what it does, and how to run it.
func header(b *strings.Builder, p *Plan, s scripted, dialect string) {
	fmt.Fprintf(b, "#!/usr/bin/env bash\n# seedance migration plan (%s) for %s: %d move(s), releases %d node(s), saves $%.2f/h ($%.2f/month).\n",
		p.SchemaVersion, dialect, len(p.Moves)-len(s.skip), len(s.release), releasedSavings(p, s), releasedSavings(p, s)*hoursPerMonth)
	if len(s.held) > 0 {
		fmt.Fprintf(b, "# %d node(s) of the plan are not released here because a move off them could not be scripted.\n", len(s.held))
	}
	if p.Refused != "" {
		b.WriteString("# " + commentText(p.Refused) + "\n")
	}
	b.WriteString("# Review it. As it is, it only prints what it would do; run it with --execute to do it.\n")
}

// releasedSavings is the plan's saving less that of nodes held back.
func releasedSavings(p *Plan, s scripted) float64 {
	if len(s.release) == len(p.ReleasedNodes) {
		return p.SavingsUSDPerHour
	}
	total := 0.0
	for _, n := range s.release {
		total += p.NodePriceUSDPerHour[n]
	}
	return total
}

func slurmMoveValid(m Move) bool {
	return slurmJobID.MatchString(m.Name) && shell.ValidNodeName(shell.Slurm, m.To) && (m.From == nil || shell.ValidNodeName(shell.Slurm, *m.From))
}

// slurmScript writes the plan as a reviewable bash script of scontrol lines, dry
// run unless run with --execute, as the kubectl one. A pending job is
// pinned to its target. A running job is moved only when Slurm would
// requeue it, in the order a controller accepts: requeuehold (it ends and
// waits, held, so that it cannot start elsewhere), update ReqNodeList,
// release. Every step is checked (set -e): a failed one stops the script
// before any drain. Released nodes are set to DRAIN, which stops new jobs
// from starting there while the jobs running there finish. A node with a
// skipped move is not drained.
func slurmScript(w io.Writer, p *Plan) error {
	var b strings.Builder
	s := planScript(p, slurmMoveValid, func(n string) bool { return shell.ValidNodeName(shell.Slurm, n) })
	header(&b, p, s, "Slurm")
	b.WriteString("set -euo pipefail\n" + argsSh + runSh + slurmSh)
	freshness(&b, p)
	if len(s.release) == 0 {
		b.WriteString("\necho 'seedance plan: nothing to do: no node is released'\nexit 0\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	for i, m := range p.Moves {
		fmt.Fprintf(&b, "\n# %s\n", commentText(fmt.Sprintf("%d. %s → %s: %s", i+1, m.Workload, m.To, m.Reason)))
		if why, bad := s.skip[i]; bad {
			b.WriteString("# skipped: " + commentText(why) + "\n")
			continue
		}
		if m.From == nil {
			fmt.Fprintf(&b, "run scontrol update JobId=%s ReqNodeList=%s\n", q(m.Name), q(m.To))
			continue
		}
		// A running job's node list cannot be changed: it is requeued
		// held first, bound to its target, then released.
		fmt.Fprintf(&b, "requeueable %s\n", q(m.Name))
		fmt.Fprintf(&b, "run scontrol requeuehold %s\n", q(m.Name))
		fmt.Fprintf(&b, "run scontrol update JobId=%s ReqNodeList=%s\n", q(m.Name), q(m.To))
		fmt.Fprintf(&b, "run scontrol release %s\n", q(m.Name))
	}
	for _, n := range p.ReleasedNodes {
		fmt.Fprintf(&b, "\n# %s\n", commentText("release "+n+": DRAIN stops new jobs from starting on it; jobs running there finish first"))
		if s.held[n] {
			b.WriteString("# not released: a move off it was skipped, or its name is not a valid Slurm node name\n")
			continue
		}
		fmt.Fprintf(&b, "run scontrol update NodeName=%s State=DRAIN Reason=%s\n", q(n), q("seedance: release (migration plan)"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commentText flattens text for a comment line: no newline or other control
// character can end the comment and start a command.
func commentText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
