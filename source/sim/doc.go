// Package sim is the simulated cluster: DGX A100, H100 and H200 nodes
// whose GPUs follow training, inference, bursty and idle patterns, driven
// by a clock that jumps. Each node implements NVML's API (internal/nvapi)
// and is sampled by source/gpu, the code that samples real GPUs, so a
// simulated profile exercises the same path. The same seed gives the same
// profile byte for byte.
package sim
