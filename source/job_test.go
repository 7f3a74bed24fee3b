package source

import "testing"

func TestParentPID(t *testing.T) {
	for stat, want := range map[string]int{
		"42 (sleep) S 7 42 42 0":          7,
		"43 (a) b (c)) R 9 43 43 0":       9,
		"44 (nvidia-smi dmon) S 1 44 0 0": 1,
	} {
		if got, ok := parentPID(stat); !ok || got != want {
			t.Errorf("parentPID(%q) = %d, %v; want %d", stat, got, ok, want)
		}
	}
	if _, ok := parentPID("garbage"); ok {
		t.Error("garbage parsed")
	}
}
