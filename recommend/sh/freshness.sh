# Refuse a stale plan: DATA_UNTIL (Unix seconds) and MAX_AGE (0: none) are
# set before it. Executed more than MAX_AGE seconds after its data, the
# cluster may have changed: it refuses unless run with --execute --stale-ok,
# and warns in a dry run.
AGE=$(( $(date +%s) - DATA_UNTIL ))
if (( MAX_AGE > 0 && AGE > MAX_AGE )); then
  if [[ "$EXECUTE" == 1 && "$STALE_OK" != 1 ]]; then
    echo "seedance plan: refused: its data is ${AGE}s old, more than migration.max_plan_age (${MAX_AGE}s); nothing was done: make a new plan, or run it with --execute --stale-ok" >&2
    exit 3
  fi
  echo "seedance plan: warning: its data is ${AGE}s old, more than migration.max_plan_age (${MAX_AGE}s)" >&2
fi
