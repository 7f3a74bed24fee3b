// Package act is reclaim's reach into the world: the notice channels
// (Alertmanager, a webhook, a command) and the actors that scale, suspend,
// evict (Kubernetes) or requeue and cancel (Slurm). Its clients have write
// verbs and are kept apart from the read-only sources; the decisions are
// package reclaim's, made before any of this is called.
package act

import "errors"

// ErrRefused marks an action the cluster refused or seedance must not take
// (a PodDisruptionBudget, an exemption on the owner, a keep annotation, a
// kind with no scale): reported, never forced, not retried.
var ErrRefused = errors.New("refused")
