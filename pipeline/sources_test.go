package pipeline

// The sources the tests read, registered as the seedance binary registers
// them (cmd/sources.go).
import (
	_ "github.com/seedance/seedance/source/prometheus"
	_ "github.com/seedance/seedance/source/sim"
)
