package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

func TestProgressText(t *testing.T) {
	tests := []struct {
		p    source.Progress
		want string
	}{
		{source.Progress{Elapsed: 150 * time.Second, Total: 300 * time.Second, MeanUtil: 41.4},
			"[============>           ] 2m30s / 5m0s  16 GPUs  util 41%"},
		{source.Progress{Elapsed: 300 * time.Second, Total: 300 * time.Second, MeanUtil: 99.6},
			"[========================] 5m0s / 5m0s  16 GPUs  util 100%"},
		{source.Progress{Elapsed: 61500 * time.Millisecond, Samples: 62, MeanUtil: profile.Null},
			"sampling 1m1s  2 nodes  16 GPUs  62 samples  util n/a"},
		{source.Progress{NodesDone: 1, Nodes: 2, MeanUtil: profile.Null},
			"[============>           ] 1 / 2 nodes  16 GPUs"},
	}
	for _, tt := range tests {
		if got := progressText(tt.p, 2, 16); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	f, get := testFactory(t, nil)
	f.IO.SetTTY(false, true)
	if code := Run(t.Context(), f, []string{"profile", "--source", "sim", "--duration", "5", "-o", t.TempDir() + "/p.json"}); code != 0 {
		t.Fatal(get().errOut)
	}
	if errOut := get().errOut; !strings.Contains(errOut, "\r\033[K") || !strings.Contains(errOut, "wrote ") {
		t.Fatalf("no progress on a terminal: %q", errOut)
	}
	f, get = testFactory(t, nil) // not a terminal (cron): summary only
	Run(t.Context(), f, []string{"profile", "--source", "sim", "--duration", "5", "-o", t.TempDir() + "/p.json"})
	if errOut := get().errOut; strings.Contains(errOut, "\r") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("output when not a terminal: %q", errOut)
	}
}

func TestReadProgressText(t *testing.T) {
	got := readProgressText(source.ReadProgress{Done: 10, Total: 40, GPUs: 64, Samples: 1_234_567}, 5*time.Second)
	if want := "queries 10/40 (25%), 64 GPUs, 1.2M samples, about 15s left"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := readProgressText(source.ReadProgress{Done: 40, Total: 40, GPUs: 8, Samples: 950}, time.Minute); got != "queries 40/40 (100%), 8 GPUs, 950 samples" {
		t.Fatalf("done: %q", got)
	}
}
