package pipeline

import (
	"github.com/seedance/seedance/recommend"
	"github.com/seedance/seedance/settings"
)

// planOptions are the planner's options from the migration settings.
func planOptions(m settings.Migration) recommend.Options {
	return recommend.Options{AllowModelChange: m.AllowModelChange, AllowSharing: m.AllowSharing, MaxMovesPerNode: m.MaxMovesPerNode,
		MoveJobs: m.MoveJobs, MovePending: m.MovePending, MoveBlockers: m.MoveBlockers, MaxAge: m.MaxPlanAge}
}
