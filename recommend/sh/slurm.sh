# requeueable JOB: stop unless Slurm would requeue the running job, and
# its user did not ask for its nodes (-w: ReqNodeList).
requeueable() {
  if [[ "$EXECUTE" != 1 ]]; then printf '+ (check that job %s can be requeued, Requeue=1, and asked for no node, ReqNodeList=(null))\n' "$1"; return; fi
  local info
  info=$(scontrol show job "$1") || return 1
  if ! grep -q 'Requeue=1' <<< "$info"; then
    echo "job $1 cannot be requeued (Requeue=0): not moved, and no node is drained" >&2
    return 1
  fi
  if grep -q 'ReqNodeList=' <<< "$info" && ! grep -q 'ReqNodeList=(null)' <<< "$info"; then
    echo "job $1 asked for its nodes (-w): not moved, and no node is drained" >&2
    return 1
  fi
}
