package recommend

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/seedance/seedance/internal/shell"
)

var slurmJobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

var q = shell.Quote

// JSON writes the plan for automation (docs/plan-v1.schema.json).
func JSON(w io.Writer, p *Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

const kubectlPrelude = `set -euo pipefail
EXECUTE=0
if [[ "${1-}" == "--execute" ]]; then EXECUTE=1; fi
run() { printf '+'; printf ' %q' "$@"; printf '\n'; if [[ "$EXECUTE" == 1 ]]; then "$@"; fi; }
# steer NAMESPACE POD NODE: give the pod's controller a preferred node
# affinity for NODE, so that the pod it recreates lands there.
steer() {
  local ns=$1 pod=$2 node=$3 kind name patch
  if [[ "$EXECUTE" != 1 ]]; then printf '+ (prefer node %s for the controller of pod %s/%s)\n' "$node" "$ns" "$pod"; return; fi
  kind=$(kubectl get pod -n "$ns" "$pod" -o jsonpath='{.metadata.ownerReferences[0].kind}')
  name=$(kubectl get pod -n "$ns" "$pod" -o jsonpath='{.metadata.ownerReferences[0].name}')
  if [[ -z "$kind" ]]; then echo "pod $ns/$pod has no controller: it would not come back; skipping" >&2; return 1; fi
  if [[ "$kind" == ReplicaSet ]]; then
    local d; d=$(kubectl get replicaset -n "$ns" "$name" -o jsonpath='{.metadata.ownerReferences[0].name}')
    if [[ -n "$d" ]]; then kind=Deployment name=$d; fi
  fi
  patch=$(printf '{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"preference":{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["%s"]}]}}]}}}}}}' "$node")
  run kubectl patch -n "$ns" "$kind/$name" --type merge -p "$patch"
}
# evict NAMESPACE POD: through the eviction API, so PodDisruptionBudgets hold.
evict() {
  local ns=$1 pod=$2 body
  body=$(mktemp)
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"}}' "$pod" "$ns" > "$body"
  run kubectl create --raw "/api/v1/namespaces/$ns/pods/$pod/eviction" -f "$body"
  rm -f "$body"
}
`

// Kubectl writes the plan as a reviewable bash script: dry run unless run
// with --execute; each source node is cordoned before its pods are evicted
// through the eviction API, and each moved pod's controller gets a node
// affinity for its target. Every name is checked (DNS-1123) and quoted; a
// move whose names fail the check becomes a comment.
func Kubectl(w io.Writer, p *Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# seedance migration plan (%s): %d move(s), releases %d node(s), saves $%.2f/h ($%.2f/month).\n",
		p.SchemaVersion, len(p.Moves), len(p.ReleasedNodes), p.SavingsUSDPerHour, p.SavingsUSDPerMonth)
	b.WriteString("# Review it. As it is, it only prints what it would do; run it with --execute to do it.\n")
	b.WriteString(kubectlPrelude)
	cordoned := map[string]bool{}
	for i, m := range p.Moves {
		fmt.Fprintf(&b, "\n# %s\n", oneLine(fmt.Sprintf("%d. %s → %s GPUs %v: %s", i+1, m.Workload, m.To, m.GPUs, m.Reason)))
		if !shell.ValidNodeName(shell.Kubectl, m.To) || (m.From != nil && !shell.ValidNodeName(shell.Kubectl, *m.From)) || !shell.ValidPod(m.Namespace, m.Name) {
			b.WriteString("# skipped: a node, namespace or pod name here is not a valid Kubernetes name\n")
			continue
		}
		if m.From != nil && !cordoned[*m.From] {
			cordoned[*m.From] = true
			fmt.Fprintf(&b, "run kubectl cordon %s\n", q(*m.From))
		}
		fmt.Fprintf(&b, "steer %s %s %s\n", q(m.Namespace), q(m.Name), q(m.To))
		fmt.Fprintf(&b, "evict %s %s\n", q(m.Namespace), q(m.Name))
	}
	for _, n := range p.ReleasedNodes {
		fmt.Fprintf(&b, "\n# %s\n", oneLine("release "+n))
		if !shell.ValidNodeName(shell.Kubectl, n) {
			b.WriteString("# skipped: not a valid Kubernetes node name\n")
			continue
		}
		if !cordoned[n] {
			fmt.Fprintf(&b, "run kubectl cordon %s\n", q(n))
		}
		fmt.Fprintf(&b, "run kubectl drain %s --ignore-daemonsets --delete-emptydir-data\n", q(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Slurm writes the plan as scontrol lines: moved jobs are pinned to their
// target and requeued, released nodes drained, each with a reason.
func Slurm(w io.Writer, p *Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# seedance migration plan (%s) for Slurm: releases %d node(s), saves $%.2f/h.\nset -euo pipefail\n",
		p.SchemaVersion, len(p.ReleasedNodes), p.SavingsUSDPerHour)
	for i, m := range p.Moves {
		fmt.Fprintf(&b, "\n# %s\n", oneLine(fmt.Sprintf("%d. %s → %s: %s", i+1, m.Workload, m.To, m.Reason)))
		if !slurmJobID.MatchString(m.Name) || !shell.ValidNodeName(shell.Slurm, m.To) {
			b.WriteString("# skipped: not a Slurm job id and node name\n")
			continue
		}
		fmt.Fprintf(&b, "scontrol update JobId=%s ReqNodeList=%s\n", q(m.Name), q(m.To))
		if m.From != nil {
			fmt.Fprintf(&b, "scontrol requeue %s\n", q(m.Name))
		}
	}
	for _, n := range p.ReleasedNodes {
		if !shell.ValidNodeName(shell.Slurm, n) {
			fmt.Fprintf(&b, "# skipped %q: not a valid Slurm node name\n", n)
			continue
		}
		fmt.Fprintf(&b, "scontrol update NodeName=%s State=DRAIN Reason=%s\n", q(n), q("seedance: release (migration plan)"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine flattens text for a comment line: no newline or other control
// character can end the comment and start a command.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
