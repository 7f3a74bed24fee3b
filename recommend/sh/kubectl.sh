# The kubectl dialect's machinery; PODS_TEMPLATE and MOVE_BLOCKERS are set
# before it.
# How long a PodDisruptionBudget may refuse an eviction and a moved pod's
# replacement may take to be ready (seconds).
EVICT_TIMEOUT=${SEEDANCE_EVICT_TIMEOUT:-300}
WAIT_TIMEOUT=${SEEDANCE_WAIT_TIMEOUT:-600}
CORDONED=()
DRAINED=()
# stop WHY: end here, saying what this run changed.
stop() {
  echo "seedance plan: stopped: $*" >&2
  if (( ${#DRAINED[@]} == 0 )); then echo "seedance plan: no node was drained" >&2; else echo "seedance plan: drained: ${DRAINED[*]}" >&2; fi
  if (( ${#CORDONED[@]} )); then echo "seedance plan: cordoned by this run (undo with kubectl uncordon): ${CORDONED[*]}" >&2; fi
  exit 3
}
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
