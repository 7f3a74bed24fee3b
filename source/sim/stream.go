package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// streamed is the simulated cluster when its clock jumps: its nodes are
// independent (each one's telemetry is a function of the seed, the node,
// the GPU and the time), so it is recorded one node at a time, each with
// a clock of its own, and the pipeline spills each node as it comes
// (source.NodeStreamer): memory holds one node, not the cluster. The
// profile is the one the whole cluster sampled at once gives, byte for
// byte (TestStreamedMatchesAtOnce).
type streamed struct {
	o    Options // Clock unset: each node gets its own
	plan []simNodeKind
	def  time.Duration
}

func newStreamed(o Options, def time.Duration) (*streamed, error) {
	if o.Nodes < 1 {
		return nil, fmt.Errorf("--sim-nodes must be at least 1, got %d", o.Nodes)
	}
	plan, err := scenarioPlan(o.Scenario, o.Nodes)
	if err != nil {
		return nil, err
	}
	return &streamed{o: o, plan: plan, def: def}, nil
}

// Size implements source.Sized.
func (s *streamed) Size() (nodes, gpus int) { return len(s.plan), 8 * len(s.plan) }

// Close implements source.Profiler.
func (s *streamed) Close() error { return nil }

// Profile records the whole cluster at once, for a caller that holds the
// profile in memory anyway.
func (s *streamed) Profile(ctx context.Context, ro source.RecordOptions) (*profile.Profile, error) {
	o := s.o
	clk := NewClock(o.Start)
	o.Clock = clk
	src, err := Open(o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return source.Sampled{Source: src, Clock: clk, DefaultDuration: s.def}.Profile(ctx, ro)
}

// ProfileNodes implements source.NodeStreamer: each node is recorded
// over the whole run and handed to emit before the next is opened. An
// interrupted run ends with the node it was recording, incomplete.
// Checkpoints are not written (the run takes no wall time to speak of),
// and progress counts nodes, not samples.
func (s *streamed) ProfileNodes(ctx context.Context, ro source.RecordOptions, emit func([]profile.Node) error) (*profile.Profile, error) {
	if ro.Duration == 0 && ro.Job == nil {
		ro.Duration = s.def
	}
	onNode := ro.OnSample
	ro.Checkpoint, ro.OnCheckpoint, ro.OnSample = 0, nil, nil
	var head *profile.Profile
	book := newQueueBook()
	for ni, kind := range s.plan {
		p, err := s.recordNode(ctx, ro, ni, kind)
		if err != nil {
			return nil, err
		}
		book.add(p.Nodes, p.EndedAt.Sub(p.StartedAt).Seconds())
		if err := emit(p.Nodes); err != nil {
			return nil, err
		}
		if onNode != nil {
			onNode(source.Progress{NodesDone: ni + 1, Nodes: len(s.plan), MeanUtil: profile.Null})
		}
		if head == nil {
			head = p
		}
		head.Complete = head.Complete && p.Complete
		head.Nodes = nil
		if !p.Complete {
			break
		}
	}
	head.Queues = book.queues() // the cluster's, not the last node's
	return head, nil
}

// recordNode records node ni alone, on a clock of its own.
func (s *streamed) recordNode(ctx context.Context, ro source.RecordOptions, ni int, kind simNodeKind) (*profile.Profile, error) {
	o := s.o
	clk := NewClock(o.Start)
	o.Clock = clk
	node, err := openSimNode(o, uint64(o.Seed), ni, kind)
	if err != nil {
		return nil, err
	}
	defer node.Close()
	ro.Clock = clk
	return source.Record(ctx, newSim(clk, node), ro)
}
