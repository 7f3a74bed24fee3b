package profile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// walkKeeping walks a document with ConvertOnly(keep) (nil: everything
// converted) and describes every GPU's times and utilization; a column
// outside keep that is not nil is an error.
func walkKeeping(data []byte, keep *[NumMetrics]bool) (string, error) {
	s, err := OpenStream(bytes.NewReader(data), "p")
	if err != nil {
		return "", err
	}
	if keep != nil {
		s.ConvertOnly(*keep)
	}
	var sb strings.Builder
	err = s.Walk(func(it Item) error {
		if it.GPU == nil {
			return nil
		}
		fmt.Fprintf(&sb, "%s/%d t=%v util=%v\n", it.Node, it.GPU.Index, it.GPU.Series.T, it.GPU.Series.GPUUtilPct)
		for m := Metric(0); m < NumMetrics; m++ {
			if keep != nil && !keep[m] && *it.GPU.Series.Col(m) != nil {
				return fmt.Errorf("%s was converted", m)
			}
		}
		return nil
	})
	return sb.String(), err
}

// checkConvertOnly: a walk that converts only util gives the same error as
// a walk that converts everything, and the same util and times.
func checkConvertOnly(t *testing.T, doc string) {
	t.Helper()
	var keep [NumMetrics]bool
	keep[GPUUtilPct] = true
	full, errFull := walkKeeping([]byte(doc), nil)
	part, errPart := walkKeeping([]byte(doc), &keep)
	if (errFull == nil) != (errPart == nil) || (errFull != nil && errFull.Error() != errPart.Error()) {
		t.Fatalf("converting everything: %v\nconverting util only: %v", errFull, errPart)
	}
	if full != part {
		t.Fatalf("converting util only read\n%.500s\nconverting everything\n%.500s", part, full)
	}
}

func TestConvertOnlyAgrees(t *testing.T) {
	base := strings.Replace(minimalProfile, `"gpu_util_pct":[5,null,7]`,
		`"gpu_util_pct":[5,null,7],"sm_active_pct":[1.5,100,null],"power_w":[300.25,0,1e3],"mem_used_bytes":null,"energy_j":[]`, 1)
	checkConvertOnly(t, minimalProfile)
	for _, c := range []struct{ old, new string }{
		{"", ""},
		{`[1.5,100,null]`, `[1.5,100.5,null]`},                                         // above 100
		{`[1.5,100,null]`, `[1.5,-0,-1]`},                                              // negative
		{`[1.5,100,null]`, `[1.5,100]`},                                                // too short
		{`[1.5,100,null]`, `[1.5,01,2]`},                                               // grammar
		{`[1.5,100,null]`, `[1.5,2,3,]`},                                               // trailing comma
		{`[1.5,100,null]`, `[1.5 2,3]`},                                                // no comma
		{`[1.5,100,null]`, `"x"`},                                                      // not a column
		{`[300.25,0,1e3]`, `[300.25,0,1e19]`},                                          // above MaxValue
		{`[300.25,0,1e3]`, `[300.25,0,1000000000000000001]`},                           // above MaxValue, no exponent
		{`[300.25,0,1e3]`, `[300.25,0,999999999999999999.5]`},                          // below it
		{`"energy_j":[]`, `"energy_j":[1,2,3]`},                                        // present, valid
		{`"t":[0,1,2]`, `"t":[0,2,1]`},                                                 // t's error comes first
		{`"mem_used_bytes":null`, `"mem_used_bytes":[1,2,3],"mem_used_bytes":[1,2,3]`}, // twice
	} {
		checkConvertOnly(t, strings.Replace(base, c.old, c.new, 1))
	}
}

// TestSharedTimesReadOnce: GPUs whose series.t is written as the last
// one's reuse its values; a t that differs by a byte, or by its spacing,
// is read; what a caller does to a GPU's times does not reach the next.
func TestSharedTimesReadOnce(t *testing.T) {
	ts := []string{`[0,1,2]`, `[0,1,2]`, `[0, 1,2]`, `[0,1,3]`, `[0,1,3]`, `[0,1,2]`}
	var gpus []string
	for i, tt := range ts {
		gpus = append(gpus, fmt.Sprintf(`{"index":%d,"uuid":"GPU-%d","series":{"t":%s,"gpu_util_pct":[1,2,3]}}`, i, i, tt))
	}
	doc := `{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:00:04Z","interval_s":1,"nodes":[{"name":"n1","gpus":[` +
		strings.Join(gpus, ",") + `]}]}`
	s, err := OpenStream(strings.NewReader(doc), "p")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.Walk(func(it Item) error {
		if it.GPU != nil {
			got = append(got, fmt.Sprint(it.GPU.Series.T))
			it.GPU.Series.T[0] = -7 // a caller that changes what it was handed
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "[0 1 2] [0 1 2] [0 1 2] [0 1 3] [0 1 3] [0 1 2]"
	if strings.Join(got, " ") != want {
		t.Fatalf("times %v, want %s", got, want)
	}
}

// TestRepeatedTallyIsChecked: a tallied column written byte for byte as the
// last GPU's takes that one's tally, and is still checked against its own
// GPU: a later GPU whose times are shorter is refused, and one whose
// column differs (out of range) is read anew and refused, as a walk that
// converts everything refuses them.
func TestRepeatedTallyIsChecked(t *testing.T) {
	gpu := func(i int, times, temp string) string {
		util := strings.NewReplacer("0", "1", "2", "1").Replace(times) // as long as times
		return fmt.Sprintf(`{"index":%d,"uuid":"g%d","series":{"t":%s,"gpu_util_pct":%s,"temp_c":%s}}`, i, i, times, util, temp)
	}
	doc := func(gpus ...string) string {
		return `{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:00:03Z",` +
			`"interval_s":1,"complete":true,"nodes":[{"name":"n1","gpus":[` + strings.Join(gpus, ",") + `]}]}`
	}
	same := `[40,40,41]`
	for name, c := range map[string]struct {
		doc  string
		fail bool
	}{
		"three alike":  {doc(gpu(0, "[0,1,2]", same), gpu(1, "[0,1,2]", same), gpu(2, "[0,1,2]", same)), false},
		"times differ": {doc(gpu(0, "[0,1,2]", same), gpu(1, "[0,1]", same)), true},
		"out of range": {doc(gpu(0, "[0,1,2]", same), gpu(1, "[0,1,2]", `[40,40,1e19]`)), true},
		"then alike":   {doc(gpu(0, "[0,1,2]", same), gpu(1, "[0,1,2]", `[40,40,42]`), gpu(2, "[0,1,2]", same)), false},
	} {
		var keep [NumMetrics]bool
		keep[GPUUtilPct] = true
		_, err := walkKeeping([]byte(c.doc), &keep)
		if (err != nil) != c.fail {
			t.Errorf("%s: %v, want an error: %v", name, err, c.fail)
		}
		checkConvertOnly(t, c.doc)
	}
}
