// Package ledger keeps seedance's history: per time bucket, node, GPU
// model and workload, the GPU-seconds held, used and idle, their cost and
// energy (docs/ledger.md). An update reads only what came after the
// ledger's watermark and commits in one transaction; what it must carry to
// the next update (the tail of the samples: open idle runs, the previous
// sample and energy reading of each GPU, the workloads' tenure) is kept in
// the ledger with the rows. The figures of any sequence of updates equal
// one analysis of all their data, because each update is analyzed by
// analyze.Cut over the carried tail and the new data, and only the pieces
// the new data settles are committed.
//
// The embedded database is SQLite (modernc.org/sqlite, pure Go); a
// postgres:// URL keeps the ledger in PostgreSQL instead.
package ledger
