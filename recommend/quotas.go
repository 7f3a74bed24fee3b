package recommend

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/internal/shell"
	"github.com/seedance/seedance/profile"
)

// quotaRef is the form of a Kueue quota's JSON pointer that the script
// patches: indices only, nothing the shell or JSON could read otherwise.
var quotaRef = regexp.MustCompile(`^/spec/resourceGroups/([0-9]+)/flavors/([0-9]+)/resources/([0-9]+)/nominalQuota$`)

// quotaSh checks a ClusterQueue's quota live and patches it: a dry run
// unless the script runs with --execute; a quota that is no longer what
// the analysis read is left alone, said, and the script ends non-zero.
const quotaSh = `set -uo pipefail
EXECUTE=0
[ "${1:-}" = --execute ] && EXECUTE=1
FAILED=0
change() { # NAME JSONPATH POINTER NOW PROPOSED
  local cur
  if ! cur=$(kubectl get clusterqueue "$1" -o "jsonpath={$2}"); then
    echo "clusterqueue $1: could not be read: left alone" >&2; FAILED=1; return
  fi
  if [ "$cur" != "$4" ]; then
    echo "clusterqueue $1: its GPU quota is now $cur, not $4 as analyzed: left alone" >&2; FAILED=1; return
  fi
  if [ "$EXECUTE" = 1 ]; then
    kubectl patch clusterqueue "$1" --type=json -p "[{\"op\":\"replace\",\"path\":\"$3\",\"value\":\"$5\"}]" || FAILED=1
  else
    echo "dry run: clusterqueue $1: GPU quota $4 -> $5 (run with --execute to apply)"
  fi
}
account() { # NAME NOW PROPOSED: GrpTRES gres/gpu of a Slurm account
  local cur
  if ! cur=$(sacctmgr --noheader --parsable2 show associations where account="$1" format=User,GrpTRES); then
    echo "account $1: could not be read: left alone" >&2; FAILED=1; return
  fi
  cur=$(printf '%s\n' "$cur" | sed -n 's/^|\(.*,\)\{0,1\}gres\/gpu=\([0-9]*\).*/\2/p' | head -n 1)
  if [ "$cur" != "$2" ]; then
    echo "account $1: its GrpTRES gres/gpu is now ${cur:-none}, not $2 as analyzed: left alone" >&2; FAILED=1; return
  fi
  if [ "$EXECUTE" = 1 ]; then
    sacctmgr -i modify account where name="$1" set GrpTRES=gres/gpu="$3" || FAILED=1
  else
    echo "dry run: account $1: GrpTRES gres/gpu $2 -> $3 (run with --execute to apply)"
  fi
}
`

// QuotaScript writes the quota what-if (docs/queues.md, What-if) as a
// reviewable bash script: each ClusterQueue whose quota the source found
// in one place is checked live against the quota analyzed, then patched
// (kubectl); each Slurm account's GrpTRES gres/gpu likewise (sacctmgr);
// the others are comments saying why not. Names are checked (DNS-1123,
// Slurm's) and quoted.
func QuotaScript(w io.Writer, changes []analyze.QuotaChange) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# seedance quota what-if: %d quota(s) right-sized from measured use (docs/queues.md).\n# Review it, then run it with --execute.\n%s", len(changes), quotaSh)
	for _, c := range changes {
		fmt.Fprintf(&b, "# %s\n", commentText(fmt.Sprintf("%s: %g -> %g GPUs: %s; pending GPU-hours within its quota %g -> %g", c.Queue, c.NominalGPUs, c.ProposedGPUs, c.Why,
			c.PendingWithinQuotaGPUHours, c.ProposedPendingWithinQuotaGPUHours)))
		m := quotaRef.FindStringSubmatch(c.QuotaRef)
		switch {
		case c.Kind == profile.QueueSlurmAccount && shell.ValidNodeName(shell.Slurm, c.Queue) && c.ProposedGPUs == math.Trunc(c.ProposedGPUs):
			fmt.Fprintf(&b, "account %s %s %s\n", shell.Quote(c.Queue), num(c.NominalGPUs), num(c.ProposedGPUs))
		case c.Kind == profile.QueueSlurmAccount:
			b.WriteString("#   not patched: not a valid Slurm account name\n")
		case c.Kind != profile.QueueKueue:
			b.WriteString("#   not patched: only Kueue ClusterQueues and Slurm accounts are\n")
		case !shell.ValidNodeName(shell.Kubectl, c.Queue):
			b.WriteString("#   not patched: not a valid ClusterQueue name\n")
		case m == nil:
			b.WriteString("#   not patched: its GPU quota is spread over several flavors or resources: set it by hand\n")
		default:
			path := fmt.Sprintf(".spec.resourceGroups[%s].flavors[%s].resources[%s].nominalQuota", m[1], m[2], m[3])
			fmt.Fprintf(&b, "change %s %s %s %s %s\n", shell.Quote(c.Queue), shell.Quote(path), shell.Quote(c.QuotaRef), num(c.NominalGPUs), num(c.ProposedGPUs))
		}
	}
	b.WriteString("exit \"$FAILED\"\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
