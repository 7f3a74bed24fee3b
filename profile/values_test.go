package profile

import (
	"encoding/json"
	"math"
	"testing"
)

func TestValuesJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   Values
		want string
	}{
		{"empty", Values{}, `[]`},
		{"ints", Values{0, 1, 100, 85899345920}, `[0,1,100,85899345920]`},
		{"nulls", Values{1, Null, 2}, `[1,null,2]`},
		{"fractions", Values{0.5, 630.125, 1e-9}, `[0.5,630.125,1e-09]`},
		{"inf is null", Values{math.Inf(1)}, `[null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("marshal = %s, want %s", b, tt.want)
			}
			var back Values
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if len(back) != len(tt.in) {
				t.Fatalf("len = %d, want %d", len(back), len(tt.in))
			}
			for i := range back {
				a, b := back[i], tt.in[i]
				if math.IsInf(b, 0) {
					b = Null
				}
				if !(a == b || (IsNull(a) && IsNull(b))) {
					t.Errorf("[%d] = %v, want %v", i, a, b)
				}
			}
		})
	}
}

func TestValuesUnmarshal(t *testing.T) {
	tests := []struct {
		in      string
		want    Values
		wantErr bool
	}{
		{`[ 1 , -2, 3.5e2 ,null]`, Values{1, -2, 350, Null}, false},
		{`null`, nil, false},
		{`[]`, Values{}, false},
		{`[123456789012345678]`, Values{123456789012345678}, false},
		{`["1"]`, nil, true},
		{`[true]`, nil, true},
		{`{"a":1}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var v Values
			err := json.Unmarshal([]byte(tt.in), &v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if (v == nil) != (tt.want == nil) || len(v) != len(tt.want) {
				t.Fatalf("got %v, want %v", v, tt.want)
			}
			for i := range v {
				if !(v[i] == tt.want[i] || (IsNull(v[i]) && IsNull(tt.want[i]))) {
					t.Errorf("[%d] = %v, want %v", i, v[i], tt.want[i])
				}
			}
		})
	}
}

func FuzzValues(f *testing.F) {
	for _, s := range []string{`[1,2,null]`, `[]`, `[1e400]`, `[-0.5]`, `[1,`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v Values
		if err := v.UnmarshalJSON(data); err != nil {
			return
		}
		b, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var w Values
		if err := w.UnmarshalJSON(b); err != nil {
			t.Fatalf("re-read of %s: %v", b, err)
		}
		if len(w) != len(v) {
			t.Fatalf("len %d != %d", len(w), len(v))
		}
	})
}
