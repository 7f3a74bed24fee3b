// Package gpu samples the GPUs of one node: a goroutine per GPU or MIG
// device so that a slow GPU does not delay the others, cumulative counters
// turned into rates, processes grouped into pods, and the node's topology.
// It is written against internal/nvapi, so that it is pure Go: the nvml
// source gives it the real NVML library, the simulator its own.
package gpu
