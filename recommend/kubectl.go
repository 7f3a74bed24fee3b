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

// kubectlPrelude is the script's machinery (docs/recommend.md, Kubernetes).
const kubectlPrelude = `set -uo pipefail
` + scriptArgs + `# How long a PodDisruptionBudget may refuse an eviction, a moved pod's
# replacement may take to be ready, and a drain may take (seconds).
EVICT_TIMEOUT=${SEEDANCE_EVICT_TIMEOUT:-300}
WAIT_TIMEOUT=${SEEDANCE_WAIT_TIMEOUT:-600}
DRAIN_TIMEOUT=${SEEDANCE_DRAIN_TIMEOUT:-300}
CORDONED=()
DRAINED=()
run() { printf '+'; printf ' %q' "$@"; printf '\n'; if [[ "$EXECUTE" == 1 ]]; then "$@"; fi; }
# stop WHY: end here, saying what this run changed.
stop() {
  echo "seedance plan: stopped: $*" >&2
  if (( ${#DRAINED[@]} == 0 )); then echo "seedance plan: no node was drained" >&2; else echo "seedance plan: drained: ${DRAINED[*]}" >&2; fi
  if (( ${#CORDONED[@]} )); then echo "seedance plan: cordoned by this run (undo with kubectl uncordon): ${CORDONED[*]}" >&2; fi
  exit 3
}
PODS_TEMPLATE='` + podsTemplate + `'
# pods NODE: the pods bound to NODE (PODS_TEMPLATE's columns).
pods() { kubectl get pods --all-namespaces --field-selector "spec.nodeName=$1" -o go-template="$PODS_TEMPLATE"; }
# blocker KIND LOCAL PIN: why moving such a pod loses something, or nothing.
blocker() {
  if [[ "$3" != - ]]; then echo "its owner asked for this node ($3)"; return; fi
  local why=""
  case "$1" in
    ReplicaSet) ;;
    -) why="no controller: evicted, it is gone" ;;
    Job) why="a Job's pod: evicted, its work starts again" ;;
    StatefulSet) why="a StatefulSet's pod: its volumes may be bound to this node" ;;
    *) why="owned by a $1, which is not known to bring it back elsewhere" ;;
  esac
  if [[ -z "$why" && "$2" != - ]]; then why="it keeps data on the node ($2): evicted, the data is lost"; fi
  if [[ -n "$why" && "$MOVE_BLOCKERS" == 1 ]]; then echo "moved anyway (migration.move_blockers): $why" >&2; why=""; fi
  echo "$why"
}
# evict NAMESPACE POD: through the Eviction API, so that PodDisruptionBudgets
# hold: a refusal (429) is retried with back-off for EVICT_TIMEOUT seconds;
# NotFound means the pod is gone already.
evict() {
  local ns=$1 pod=$2 out wait=1 deadline=$((SECONDS + EVICT_TIMEOUT))
  local path="/api/v1/namespaces/$ns/pods/$pod/eviction"
  local body
  body=$(printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"}}' "$pod" "$ns")
  printf '+ evict %q %q (the Eviction API; a disruption budget'"'"'s refusal is retried for %ss)\n' "$ns" "$pod" "$EVICT_TIMEOUT"
  if [[ "$EXECUTE" != 1 ]]; then return 0; fi
  while :; do
    if out=$(kubectl create --raw "$path" -f - <<< "$body" 2>&1); then return 0; fi
    case "$out" in
      *NotFound*|*"not found"*) return 0 ;;
      *TooManyRequests*|*"disruption budget"*|*"(429)"*) ;;
      *) echo "seedance plan: evicting $ns/$pod failed: $out" >&2; return 1 ;;
    esac
    if (( SECONDS >= deadline )); then
      echo "seedance plan: $ns/$pod: its PodDisruptionBudget refused the eviction for ${EVICT_TIMEOUT}s" >&2
      return 1
    fi
    sleep "$wait"; wait=$(( wait < 16 ? wait * 2 : 16 ))
  done
}
# replaced NAMESPACE POD REPLICASET PREDICTED: wait until the evicted pod is
# gone and its ReplicaSet has its replicas ready again, then say where they
# run and whether the plan's prediction held.
replaced() {
  local ns=$1 pod=$2 rs=$3 want got deadline=$((SECONDS + WAIT_TIMEOUT))
  printf '+ (wait for the replacement of %s/%s, ReplicaSet %s, for up to %ss)\n' "$ns" "$pod" "$rs" "$WAIT_TIMEOUT"
  if [[ "$EXECUTE" != 1 ]]; then return 0; fi
  while kubectl get pod -n "$ns" "$pod" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || return 1
    sleep 1
  done
  while :; do
    read -r want got < <(kubectl get replicaset -n "$ns" "$rs" -o 'jsonpath={.spec.replicas} {.status.readyReplicas}{"\n"}') || true
    if [[ -n "${want:-}" && "${got:-0}" -ge "$want" ]]; then break; fi
    (( SECONDS < deadline )) || return 1
    sleep 1
  done
  local where
  where=$(kubectl get pods -n "$ns" -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk -v p="$rs-" 'index($1, p) == 1 {print $2}' | sort | uniq -c | awk '{printf "%s%s×%s", sep, $2, $1; sep=", "}')
  if [[ " $where " == *" $4×"* || "$where" == "$4×"* ]]; then
    echo "seedance plan: $ns/$pod replaced; its ReplicaSet runs on $where (as planned: $4)"
  else
    echo "seedance plan: $ns/$pod replaced; its ReplicaSet runs on $where (the plan predicted $4; the scheduler chose)"
  fi
}
`

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
	b.WriteString(kubectlPrelude)
	moveBlockers := 0
	if p.MoveBlockers {
		moveBlockers = 1
	}
	fmt.Fprintf(&b, "MOVE_BLOCKERS=%d\n", moveBlockers)
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
	b.WriteString(kubectlSteps)
	_, err := io.WriteString(w, b.String())
	return err
}

// kubectlSteps are the script's steps over NODES.
const kubectlSteps = `
# 1. Check every pod bound to the nodes to release, live.
declare -A HELD=()
for n in "${NODES[@]}"; do
  if [[ "$EXECUTE" != 1 ]]; then
    printf '+ (check the pods on %s: none without a controller, of a Job or StatefulSet, with local data, or pinned to it)\n' "$n"
    continue
  fi
  list=$(pods "$n") || stop "cannot list the pods on $n"
  while read -r ns pod kind owner phase local pin; do
    [[ -z "$ns" || "$kind" == DaemonSet || "$phase" == Succeeded || "$phase" == Failed ]] && continue
    why=$(blocker "$kind" "$local" "$pin")
    if [[ -n "$why" ]]; then
      HELD[$n]=1
      echo "seedance plan: $n is not released: pod $ns/$pod: $why" >&2
    fi
  done <<< "$list"
done
# 2. Cordon them all first, so that no replacement lands on a node being emptied.
for n in "${NODES[@]}"; do
  [[ -n "${HELD[$n]-}" ]] && continue
  run kubectl cordon "$n" || stop "kubectl cordon $n failed"
  CORDONED+=("$n")
done
# 3. Evict their pods, then wait for each controller's replacement.
MOVED=()
if [[ "$EXECUTE" != 1 ]]; then
  for p in "${!PREDICTED[@]}"; do printf '+ (evict %s: the plan moves it to %s)\n' "$p" "${PREDICTED[$p]}"; done
fi
for n in "${NODES[@]}"; do
  if [[ "$EXECUTE" != 1 ]]; then
    printf '+ (evict every other pod on %s but DaemonSets'"'"' and finished ones, as kubectl drain would)\n' "$n"
  fi
  [[ -n "${HELD[$n]-}" ]] && continue
  list=""
  if [[ "$EXECUTE" == 1 ]]; then list=$(pods "$n") || stop "cannot list the pods on $n"; fi
  while read -r ns pod kind owner phase local pin; do
    [[ -z "$ns" || "$kind" == DaemonSet || "$phase" == Succeeded || "$phase" == Failed ]] && continue
    evict "$ns" "$pod" || stop "the eviction of $ns/$pod was refused"
    [[ "$kind" == ReplicaSet ]] && MOVED+=("$ns $pod $owner")
  done <<< "$list"
done
for m in "${MOVED[@]}"; do
  read -r ns pod rs <<< "$m"
  replaced "$ns" "$pod" "$rs" "${PREDICTED[$ns/$pod]-another node}" || stop "the replacement of $ns/$pod was not ready within ${WAIT_TIMEOUT}s"
done
# 4. Drain: only DaemonSet pods are left on the nodes.
for n in "${NODES[@]}"; do
  [[ -n "${HELD[$n]-}" ]] && continue
  run kubectl drain "$n" --ignore-daemonsets --timeout="${DRAIN_TIMEOUT}s" || stop "kubectl drain $n failed"
  DRAINED+=("$n")
done
released=()
for n in "${NODES[@]}"; do [[ -z "${HELD[$n]-}" ]] && released+=("$n"); done
if [[ "$EXECUTE" != 1 ]]; then
  echo "seedance plan: dry run: would release ${released[*]:-no node} (run it with --execute to do it)"
  exit 0
fi
echo "seedance plan: done: released ${released[*]:-no node}${HELD[*]:+; held: ${!HELD[*]}}"
`

func kubectlMoveValid(m Move) bool {
	return shell.ValidNodeName(shell.Kubectl, m.To) && (m.From == nil || shell.ValidNodeName(shell.Kubectl, *m.From)) && shell.ValidPod(m.Namespace, m.Name)
}
