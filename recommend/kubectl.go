package recommend

import (
	"fmt"
	"io"
	"strings"

	"github.com/seedance/seedance/internal/shell"
)

// podsTemplate lists the pods bound to a node, one a line: namespace,
// name, controller kind and name ("-" for none), phase, local data
// (emptyDir, hostPath or "-") and whether its owner pinned it to the node
// (a nodeSelector or required affinity on the host name, or "-"). It is a
// go-template, so that the script needs kubectl alone (no jq).
const podsTemplate = `{{range .items}}{{$kind := "-"}}{{$owner := "-"}}` +
	`{{range .metadata.ownerReferences}}{{if .controller}}{{$kind = .kind}}{{$owner = .name}}{{end}}{{end}}` +
	`{{$local := "-"}}{{range .spec.volumes}}{{if ne (printf "%T" .emptyDir) "<nil>"}}{{$local = "emptyDir"}}{{end}}` +
	`{{if ne (printf "%T" .hostPath) "<nil>"}}{{$local = "hostPath"}}{{end}}{{end}}` +
	`{{$pin := "-"}}{{with .spec.nodeSelector}}{{if ne (printf "%T" (index . "kubernetes.io/hostname")) "<nil>"}}{{$pin = "nodeSelector"}}{{end}}{{end}}` +
	`{{with .spec.affinity}}{{with .nodeAffinity}}{{with .requiredDuringSchedulingIgnoredDuringExecution}}{{range .nodeSelectorTerms}}` +
	`{{range .matchExpressions}}{{if eq .key "kubernetes.io/hostname"}}{{$pin = "affinity"}}{{end}}{{end}}` +
	`{{range .matchFields}}{{if eq .key "metadata.name"}}{{$pin = "affinity"}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}` +
	`{{.metadata.namespace}} {{.metadata.name}} {{$kind}} {{$owner}} {{.status.phase}} {{$local}} {{$pin}}{{"\n"}}{{end}}`

// kubectlScript writes the plan as a bash script that runs to the end on a real
// API server or stops cleanly before draining anything (docs/recommend.md,
// Kubernetes). It is a dry run unless run with --execute. For the nodes
// the plan releases, in order: every pod bound to them is checked live,
// and a node with a pod whose move would lose something (no controller, a
// Job's or StatefulSet's pod, local data, a pod its owner pinned there) is
// held: not cordoned, not drained, and said why. The others are cordoned
// first (so that no replacement lands on a node being emptied), then each
// of their pods is evicted through the Eviction API (a disruption
// budget's refusal retried for a bounded time, then the script stops
// before any drain), the script waits (bounded) until each controller's
// replacement is ready and says where it runs against the plan's
// prediction, and only then drains. No owner's template is ever patched:
// the scheduler places the replacements. Every name is checked (DNS-1123)
// and quoted.
func kubectlScript(w io.Writer, p *Plan) error {
	var b strings.Builder
	s := planScript(p, kubectlMoveValid, func(n string) bool { return shell.ValidNodeName(shell.Kubectl, n) })
	header(&b, p, s, "Kubernetes")
	moveBlockers := 0
	if p.MoveBlockers {
		moveBlockers = 1
	}
	fmt.Fprintf(&b, "set -uo pipefail\n%s%s# shellcheck disable=SC2016 # a go-template: its $ are not the shell's\nPODS_TEMPLATE=%s\nMOVE_BLOCKERS=%d\n%s", argsSh, runSh, q(podsTemplate), moveBlockers, kubectlSh)
	freshness(&b, p)
	if len(s.release) == 0 {
		b.WriteString("\necho 'seedance plan: nothing to do: no node is released'\nexit 0\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n# The plan's moves: where each pod is predicted to go (the scheduler decides).\ndeclare -A PREDICTED=(")
	for i, m := range p.Moves {
		if _, bad := s.skip[i]; !bad && m.From != nil {
			fmt.Fprintf(&b, " [%s]=%s", q(m.Namespace+"/"+m.Name), q(m.To))
		}
	}
	b.WriteString(" )\nNODES=(")
	for _, n := range s.release {
		b.WriteString(" " + q(n))
	}
	b.WriteString(" )\n")
	for i, m := range p.Moves {
		fmt.Fprintf(&b, "# %s\n", commentText(fmt.Sprintf("%d. %s → %s GPUs %v: %s", i+1, m.Workload, m.To, m.GPUs, m.Reason)))
		if why, bad := s.skip[i]; bad {
			b.WriteString("#    skipped: " + commentText(why) + "\n")
		}
	}
	for n := range s.held {
		fmt.Fprintf(&b, "# %s\n", commentText("not released: "+n+": a move off it was skipped, or its name is not a valid Kubernetes node name"))
	}
	b.WriteString(kubectlStepsSh)
	_, err := io.WriteString(w, b.String())
	return err
}

func kubectlMoveValid(m Move) bool {
	return shell.ValidNodeName(shell.Kubectl, m.To) && (m.From == nil || shell.ValidNodeName(shell.Kubectl, *m.From)) && shell.ValidPod(m.Namespace, m.Name)
}
