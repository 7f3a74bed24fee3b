// Package profile owns seedance's profile format v1 (the JSON document that every
// source writes and every report reads) and the samplers that produce it: NVML on
// the local node and a simulated cluster built on go-nvml's mock servers.
//
// Data flows one way: a Source yields one sample per GPU per tick, the Recorder
// appends them to a Profile, and WriteFile stores it atomically.
package profile
