// Package dcgm maps dcgm-exporter's metrics and labels onto the profile
// format, and builds profile nodes from raw series (a Builder), for the
// Prometheus and scrape sources.
package dcgm
