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

// patchable is how the script patches a kind of queue's quota: the
// kubectl resource, the form of the JSON pointer the source gave
// (Queue.QuotaRef: indices and names only, nothing the shell or JSON could
// read otherwise), its JSONPath for the live check, and whether the value
// is a number (KAI) or a quantity string (Kueue, Volcano).
type patchable struct {
	resource string
	ref      *regexp.Regexp
	path     func(m []string) string
	number   bool
}

var patchables = map[string]patchable{
	profile.QueueKueue: {"clusterqueue", regexp.MustCompile(`^/spec/resourceGroups/([0-9]+)/flavors/([0-9]+)/resources/([0-9]+)/nominalQuota$`),
		func(m []string) string {
			return fmt.Sprintf(".spec.resourceGroups[%s].flavors[%s].resources[%s].nominalQuota", m[1], m[2], m[3])
		}, false},
	"volcano": {"queues.scheduling.volcano.sh", regexp.MustCompile(`^/spec/deserved/([a-z0-9.-]+)~1gpu$`),
		func(m []string) string { return `.spec.deserved.` + strings.ReplaceAll(m[1], ".", `\.`) + `/gpu` }, false},
	"kai": {"queues.v2.scheduling.run.ai", regexp.MustCompile(`^/spec/resources/gpu/quota$`),
		func([]string) string { return ".spec.resources.gpu.quota" }, true},
}

// slurmEntities are the Slurm queue kinds by sacctmgr's name of them.
var slurmEntities = map[string]string{profile.QueueSlurmAccount: "account", profile.QueueSlurmQOS: "qos"}

// quotaSh checks a queue's quota live and patches it: a dry run unless
// the script runs with --execute; a quota that is no longer what the
// analysis read is left alone, said, and the script ends non-zero.
const quotaSh = `set -uo pipefail
EXECUTE=0
[ "${1:-}" = --execute ] && EXECUTE=1
FAILED=0
change() { # RESOURCE NAME JSONPATH POINTER NOW PROPOSED VALUE
  local cur
  if ! cur=$(kubectl get "$1" "$2" -o "jsonpath={$3}"); then
    echo "$1 $2: could not be read: left alone" >&2; FAILED=1; return
  fi
  if [ "$cur" != "$5" ]; then
    echo "$1 $2: its GPU quota is now $cur, not $5 as analyzed: left alone" >&2; FAILED=1; return
  fi
  if [ "$EXECUTE" = 1 ]; then
    kubectl patch "$1" "$2" --type=json -p "[{\"op\":\"replace\",\"path\":\"$4\",\"value\":$7}]" || FAILED=1
  else
    echo "dry run: $1 $2: GPU quota $5 -> $6 (run with --execute to apply)"
  fi
}
slurm_limit() { # account|qos NAME NOW PROPOSED: GrpTRES gres/gpu of a Slurm account or QOS
  local cur ok=1
  if [ "$1" = account ]; then
    cur=$(sacctmgr --noheader --parsable2 show associations where account="$2" format=User,GrpTRES) || ok=0
  elif cur=$(sacctmgr --noheader --parsable2 show qos where name="$2" format=GrpTRES); then
    cur="|$cur"
  else
    ok=0
  fi
  if [ "$ok" = 0 ]; then
    echo "$1 $2: could not be read: left alone" >&2; FAILED=1; return
  fi
  cur=$(printf '%s\n' "$cur" | sed -n 's/^|\(.*,\)\{0,1\}gres\/gpu=\([0-9]*\).*/\2/p' | head -n 1)
  if [ "$cur" != "$3" ]; then
    echo "$1 $2: its GrpTRES gres/gpu is now ${cur:-none}, not $3 as analyzed: left alone" >&2; FAILED=1; return
  fi
  if [ "$EXECUTE" = 1 ]; then
    sacctmgr -i modify "$1" where name="$2" set GrpTRES=gres/gpu="$4" || FAILED=1
  else
    echo "dry run: $1 $2: GrpTRES gres/gpu $3 -> $4 (run with --execute to apply)"
  fi
}
`

// QuotaScript writes the quota what-if (docs/queues.md, What-if) as a
// reviewable bash script: each ClusterQueue whose quota the source found
// in one place is checked live against the quota analyzed, then patched
// (kubectl); each Slurm account's or QOS's GrpTRES gres/gpu likewise
// (sacctmgr);
// the others are comments saying why not. Names are checked (DNS-1123,
// Slurm's) and quoted.
func QuotaScript(w io.Writer, changes []analyze.QuotaChange) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# seedance quota what-if: %d quota(s) right-sized from measured use (docs/queues.md).\n# Review it, then run it with --execute.\n%s", len(changes), quotaSh)
	for _, c := range changes {
		fmt.Fprintf(&b, "# %s\n", commentText(fmt.Sprintf("%s: %g -> %g GPUs: %s; pending GPU-hours within its quota %g -> %g", c.Queue, c.NominalGPUs, c.ProposedGPUs, c.Why,
			c.PendingWithinQuotaGPUHours, c.ProposedPendingWithinQuotaGPUHours)))
		quotaLine(&b, c)
	}
	b.WriteString("exit \"$FAILED\"\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// quotaLine writes the change of one queue, or a comment saying why it is
// not patched.
func quotaLine(b *strings.Builder, c analyze.QuotaChange) {
	if entity, ok := slurmEntities[c.Kind]; ok {
		if shell.ValidNodeName(shell.Slurm, c.Queue) && c.ProposedGPUs == math.Trunc(c.ProposedGPUs) {
			fmt.Fprintf(b, "slurm_limit %s %s %s %s\n", entity, shell.Quote(c.Queue), num(c.NominalGPUs), num(c.ProposedGPUs))
			return
		}
		fmt.Fprintf(b, "#   not patched: not a valid Slurm %s name\n", entity)
		return
	}
	k, ok := patchables[c.Kind]
	name := strings.TrimPrefix(c.Queue, c.Kind+"/") // volcano/NAME when Kueue is served too
	var m []string
	if ok {
		m = k.ref.FindStringSubmatch(c.QuotaRef)
	}
	switch {
	case !ok:
		b.WriteString("#   not patched: a queue of a kind seedance does not patch\n")
	case !shell.ValidNodeName(shell.Kubectl, name):
		b.WriteString("#   not patched: not a valid queue name\n")
	case m == nil:
		b.WriteString("#   not patched: its GPU quota is spread over several flavors or resources: set it by hand\n")
	default:
		value := strconv.Quote(num(c.ProposedGPUs))
		if k.number {
			value = num(c.ProposedGPUs)
		}
		fmt.Fprintf(b, "change %s %s %s %s %s %s %s\n", k.resource, shell.Quote(name), shell.Quote(k.path(m)), shell.Quote(c.QuotaRef),
			num(c.NominalGPUs), num(c.ProposedGPUs), shell.Quote(value))
	}
}
