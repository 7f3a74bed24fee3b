// Package source holds what seedance's sources share: the Source interface
// that the samplers (source/nvml through source/gpu, source/sim) implement,
// the clocks, Record (which samples a Source into a profile, with
// checkpoints, a wrapped command's job and interruption), and the errors
// every source returns. Each source is a package below it; the Prometheus
// reader and the dcgm-exporter scraper build profiles from series instead.
package source
