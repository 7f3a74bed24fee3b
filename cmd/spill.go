package cmd

import (
	"errors"
	"fmt"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// spilled is the nodes of a run that a source handed over in batches,
// encoded in a temporary file, and what they hold.
type spilled struct {
	*profile.Spill
	tally
}

// streamable is the source as a NodeStreamer when this run can take its
// nodes in batches: no wrapped command, and no --slurm or --topology-file,
// which work on every node at once.
func (o *ProfileOptions) streamable(src source.Profiler) (source.NodeStreamer, bool) {
	s, ok := src.(source.NodeStreamer)
	return s, ok && len(o.Command) == 0 && !o.Config.Slurm.Pending && len(o.topologies) == 0
}

// spillRun runs a streaming source, its nodes going to a spill file in
// dir as they come: memory holds one batch. It returns the profile's
// header (no nodes) and the spill.
func spillRun(o *ProfileOptions, s source.NodeStreamer, ro source.RecordOptions, dir string) (*profile.Profile, *spilled, error) {
	sp, err := profile.NewSpill(dir)
	if err != nil {
		return nil, nil, err
	}
	out := &spilled{Spill: sp}
	h, err := s.ProfileNodes(o.Ctx, ro, func(nodes []profile.Node) error {
		out.add(nodes)
		for i := range nodes {
			if err := sp.Node(&nodes[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		sp.Close()
		if errors.Is(err, source.ErrInterrupted) {
			return nil, nil, &exit.Error{Code: exit.Interrupted, Err: err}
		}
		return nil, nil, err
	}
	return h, out, nil
}

// finishSpilled writes a spilled profile (header, then the spilled nodes),
// prints the summary line and the notes, and turns an interrupted run
// into exit status 130.
func finishSpilled(o *ProfileOptions, h *profile.Profile, sp *spilled) error {
	pc := o.Config.Profile
	if sp.samples == 0 {
		return fmt.Errorf("%w: the %s source collected no GPU sample; no file written", source.ErrNothingObserved, h.Source)
	}
	var err error
	if pc.Output == "-" {
		err = sp.Write(o.IO.Out, h, false)
	} else {
		err = sp.WriteFile(pc.Output, h)
	}
	if err != nil {
		return err
	}
	if !pc.Quiet {
		fmt.Fprintln(o.IO.ErrOut, table.Visible(sp.line(pc.Output, h.Complete)))
	}
	for _, n := range h.Notes {
		fmt.Fprintln(o.IO.ErrOut, "note: "+table.Visible(n))
	}
	if !h.Complete && o.Ctx.Err() != nil {
		return &exit.Error{Code: exit.Interrupted, Err: errors.New("interrupted: wrote the samples collected so far (\"complete\": false)")}
	}
	return nil
}
