// Package prometheus is the prometheus source: it reads dcgm-exporter
// series (and kube-state-metrics' pending pods) of a time range from a
// Prometheus-compatible server, in chunks, with retries, and builds a
// profile with source/dcgm.
package prometheus
