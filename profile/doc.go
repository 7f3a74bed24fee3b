// Package profile is seedance's profile format v1: the JSON document that
// every source writes and every report reads. It holds the types, the
// streaming reader (OpenStream; Read is built on it), the encoder, and the
// limits and validation that a reader of untrusted input needs. It is pure
// Go: the samplers that produce profiles live under source/.
package profile
