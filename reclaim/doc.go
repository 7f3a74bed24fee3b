// Package reclaim decides what to do about GPUs held idle: which
// workloads are candidates (idle since their last activity for at least a
// policy's idle_for, with the guards of docs/reclaim.md), what each idle
// episode has cost and costs an hour, and what the next step of its
// episode is (notice, wait, act, drop, keep). It is pure: a profile stream
// and the recorded episodes in, assessments and steps out; it prints
// nothing, reads no clock and reaches no server. The clients that notify
// and act live in reclaim/act; the episodes are kept by the ledger.
package reclaim
