//go:build race

package cmd

// raceEnabled: the race detector multiplies this test process's memory,
// and a child started by vfork is charged, in its peak RSS, with what the
// parent held until the child executes: under -race the children's peak
// RSS says nothing, and the bounds on it are checked by the plain run.
const raceEnabled = true
