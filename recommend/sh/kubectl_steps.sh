# The kubectl dialect's steps over NODES (PREDICTED: where each move goes).
# How long a drain may take (seconds).
DRAIN_TIMEOUT=${SEEDANCE_DRAIN_TIMEOUT:-300}
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
