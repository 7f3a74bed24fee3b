# Arguments: --execute does it, --stale-ok executes a plan older than its
# max age; anything else stops (exit 2) before any command.
EXECUTE=0
STALE_OK=0
for a in "$@"; do
  case "$a" in
    --execute) EXECUTE=1 ;;
    --stale-ok) STALE_OK=1 ;;
    *) echo "seedance plan: unknown argument $(printf '%q' "$a") (--execute, --stale-ok)" >&2; exit 2 ;;
  esac
done
