// Package scrape is the scrape source: it scrapes dcgm-exporter endpoints
// at an interval and builds a profile with source/dcgm.
package scrape
