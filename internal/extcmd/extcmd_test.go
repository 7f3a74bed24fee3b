package extcmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	out, err := Run(context.Background(), DefaultLimits, "sh", "-c", "echo hello")
	if err != nil || string(out) != "hello\n" {
		t.Fatalf("%q %v", out, err)
	}
	_, err = Run(context.Background(), DefaultLimits, "sh", "-c", "echo 'squeue: error: no controller' >&2; exit 1")
	if err == nil || !strings.Contains(err.Error(), "squeue: error: no controller") {
		t.Errorf("failure: %v", err)
	}
}

// TestRunBounded (#27, case 5): a command that never answers is killed at
// its deadline, with its children; one that writes without end is killed
// past its output bound; the caller's context (a signal) stops it at once.
func TestRunBounded(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), Limits{Time: 300 * time.Millisecond}, "sh", "-c", "sleep 60 & sleep 60")
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "limits.command_time") {
		t.Errorf("hang: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the hung command held %s", took)
	}
	_, err = Run(context.Background(), Limits{Time: time.Minute, OutputBytes: 1 << 20}, "sh", "-c", "yes squeue-line")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limits.command_output_mib") {
		t.Errorf("endless output: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = Run(ctx, Limits{Time: time.Hour}, "sleep", "60")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
