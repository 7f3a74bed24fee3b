// Package analyze turns profiles into the numbers a cluster owner acts on:
// which GPUs and nodes sat idle, what that cost in money and energy, and what
// to do about it. It is pure: it reads profile streams and returns a Report;
// it prints nothing, reads no flags and no clock. The rules it implements are
// written in docs/analysis.md, and the code follows them exactly.
package analyze
