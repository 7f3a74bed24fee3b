# run COMMAND...: print it, quoted, and run it only with --execute.
run() { printf '+'; printf ' %q' "$@"; printf '\n'; if [[ "$EXECUTE" == 1 ]]; then "$@"; fi; }
