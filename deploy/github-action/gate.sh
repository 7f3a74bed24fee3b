#!/usr/bin/env bash
# The GitHub Action's step (action.yml): profile INPUT_COMMAND with seedance,
# analyze it with the gates of INPUT_GATES (one a line) and the baseline of
# INPUT_BASELINE, write report.json and report.md to INPUT_OUTPUT_DIR and
# the Markdown to the job summary. Exit status: the command's when it
# failed, else 3 when a gate failed, else 0. Every input is a variable
# expanded in double quotes or an array element: none is ever parsed as
# shell. SEEDANCE names the binary (default: seedance on PATH).
set -euo pipefail

seedance=${SEEDANCE:-seedance}
out=${INPUT_OUTPUT_DIR:-seedance-report}
# One line (a newline would add a key of its own to $GITHUB_OUTPUT), and
# never read as an option by mkdir or seedance.
if [[ "$out" == *$'\n'* || "$out" == *$'\r'* ]]; then
  echo "seedance-action: output-dir must be one line" >&2
  exit 2
fi
if [[ "$out" == -* ]]; then
  out="./$out"
fi
mkdir -p -- "$out"

profile_args=()
while IFS= read -r arg; do
  [[ -n "$arg" ]] && profile_args+=("$arg")
done <<< "${INPUT_PROFILE_ARGS:-}"

command_status=0
"$seedance" profile "${profile_args[@]}" --quiet --output="$out/profile.json" -- bash -c "$INPUT_COMMAND" || command_status=$?
if [[ ! -s "$out/profile.json" ]]; then
  echo "seedance-action: no profile was written (exit $command_status)" >&2
  exit "$(( command_status == 0 ? 1 : command_status ))"
fi

# The baseline is the target branch's report, when it has one yet: on the
# first run there is none, and the gates that read delta.* wait for it.
common=("$out/profile.json")
baseline=no
if [[ -n "${INPUT_BASELINE:-}" && -f "$INPUT_BASELINE" ]]; then
  common+=(--baseline "$INPUT_BASELINE")
  baseline=yes
elif [[ -n "${INPUT_BASELINE:-}" ]]; then
  echo "seedance-action: no baseline at $INPUT_BASELINE yet: the delta.* gates are skipped" >&2
fi
while IFS= read -r gate; do
  [[ -z "${gate//[[:space:]]/}" ]] && continue
  if [[ "$baseline" == no && "$gate" == *delta.* ]]; then
    echo "seedance-action: skipped without a baseline: $gate" >&2
    continue
  fi
  common+=(--gate "$gate")
done <<< "${INPUT_GATES:-}"

gate_status=0
"$seedance" analyze "${common[@]}" --format json --output="$out/report.json" || gate_status=$?
"$seedance" analyze "${common[@]}" --format markdown --output="$out/report.md" 2>/dev/null || true
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$out/report.md" ]]; then
  cat "$out/report.md" >> "$GITHUB_STEP_SUMMARY"
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  echo "report=$out/report.json" >> "$GITHUB_OUTPUT"
fi

if (( command_status != 0 )); then
  exit "$command_status"
fi
exit "$gate_status"
