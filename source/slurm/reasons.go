package slurm

import (
	"context"
	"strings"
)

// Why a job waited (docs/queues.md, Slurm): for the hoarding verdict, a
// wait is demand only when the job waited for GPUs that others held
// (Slurm's Priority, Resources, or a group's GPU cap such as
// AssocGrpGRES). A job its own limits kept waiting — a per-user, per-job
// or per-account cap (QOSMaxGRESPerUser, AssocMaxGRESPerJob,
// MaxGRESPerAccount), a used-up GPU-minute budget (AssocGrpGRESMinutes),
// a request its QOS or partition does not allow — waited whatever
// another queue left idle. The reasons are Slurm 22.05's
// (src/common/slurm_protocol_defs.c, job_reason_string).

// heldBy is reason when it says the job's own limits kept it waiting, ""
// when it waited for GPUs (or the reason is not known). current: the
// reason squeue gives a job pending now, where a hold (JobHeldUser,
// JobHeldAdmin) counts too; sacct's Reason is the last one other than
// Priority and Resources the job had while pending, which for a hold, a
// dependency or a begin time was before it became eligible (and its wait
// for GPUs began: addJob), so those do not count there.
func heldBy(reason string, current bool) string {
	r := strings.TrimSpace(reason)
	switch {
	case ownLimit(r):
		return r
	case current && (r == "JobHeldUser" || r == "JobHeldAdmin" || r == "JobHoldMaxRequeue"):
		return r
	}
	return ""
}

// ownLimit says whether a reason is a limit of the job's own: its user's,
// its own size's, its account's or QOS's budget, or a request not
// allowed.
func ownLimit(r string) bool {
	switch {
	case strings.HasPrefix(r, "QOSMax"), strings.HasPrefix(r, "AssocMax"), strings.HasPrefix(r, "QOSMin"),
		strings.HasPrefix(r, "Max") && strings.HasSuffix(r, "PerAccount"):
		return true // per user, job, node or account
	case (strings.HasPrefix(r, "QOSGrp") || strings.HasPrefix(r, "AssocGrp")) && strings.Contains(r, "Minutes"):
		return true // a budget used up
	}
	switch r {
	case "InvalidAccount", "InvalidQOS", "QOSNotAllowed", "AccountNotAllowed", "PartitionConfig", "PartitionTimeLimit",
		"PartitionNodeLimit", "BadConstraints", "AssociationTimeLimit", "QOSTimeLimit", "JobArrayTaskLimit", "DependencyNeverSatisfied":
		return true
	}
	return false
}

// pendingReasons is squeue's reason for each job pending now, by id; nil
// when squeue fails (the reasons sacct keeps stand).
func pendingReasons(ctx context.Context, squeue Squeue) map[string]string {
	if squeue == nil {
		return nil
	}
	out, err := squeue(ctx, "--noheader", "--states=PENDING", "--format=%i|%r")
	if err != nil {
		return nil
	}
	reasons := map[string]string{}
	eachLine(out, func(line string) {
		if id, r, ok := strings.Cut(line, "|"); ok && jobID.MatchString(strings.TrimSpace(id)) {
			reasons[strings.TrimSpace(id)] = strings.TrimSpace(r)
		}
	})
	return reasons
}
