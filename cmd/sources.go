package cmd

// The sources of this build, registered with their settings by their
// packages' init (source.Register, internal/setting): package settings
// knows them from there, without importing them.
import (
	_ "github.com/seedance/seedance/source/gpu"
	_ "github.com/seedance/seedance/source/prometheus"
	_ "github.com/seedance/seedance/source/scrape"
	_ "github.com/seedance/seedance/source/sim"
)
