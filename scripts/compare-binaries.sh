#!/usr/bin/env bash
# Compares every output of two seedance binaries on the simulated scenarios:
# each report × format × dialect of analyze, recommend in every dialect,
# --source and a baseline (stdout, stderr and exit status, byte for byte).
# A refactoring (#28) must change none of them:
#   git worktree add /tmp/old <rev> && (cd /tmp/old && go build -o /tmp/seedance-old .)
#   go build -o /tmp/seedance-new . && bash scripts/compare-binaries.sh /tmp/seedance-old /tmp/seedance-new
set -u
old=$1 new=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
n=0 diffs=0
same() { # same ARGS...: both binaries, the same stdout, stderr and status
  "$old" "$@" > o.out 2> o.err; local oc=$?
  "$new" "$@" > n.out 2> n.err; local nc=$?
  n=$((n + 1))
  if ! cmp -s o.out n.out || ! cmp -s o.err n.err || [ "$oc" != "$nc" ]; then
    echo "DIFF: $* (exit $oc/$nc)"
    diffs=$((diffs + 1))
  fi
}
for sc in mixed idle busy fragmented; do
  for nodes in 8 24; do
    p=$sc-$nodes.json
    same profile --source sim --sim-scenario "$sc" --sim-nodes "$nodes" --duration 600 -q -o -
    "$old" profile --source sim --sim-scenario "$sc" --sim-nodes "$nodes" --duration 600 -q -o "$p"
    for rep in cost-savings idle utilization scaling migration attribution fragmentation all; do
      for fmt in table json yaml markdown csv prom html; do
        for d in kubectl slurm none; do
          same analyze "$p" --report "$rep" --format "$fmt" --dialect "$d" --gate 'summary.gpus>0'
        done
      done
    done
    for d in kubectl slurm json yaml; do
      same recommend -i "$p" --dialect "$d"
      same recommend -i "$p" --dialect "$d" --allow-sharing
      same recommend -i "$p" --dialect "$d" --move-jobs --move-blockers
    done
  done
done
same analyze --source sim --report all --format json
"$old" analyze idle-8.json --format json -o base.json
same analyze mixed-8.json --baseline base.json --format markdown --gate 'delta.idle_ratio < 0'
echo "$n comparisons, $diffs differences"
[ "$diffs" = 0 ]
