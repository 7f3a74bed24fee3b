package exprguard

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr"
)

var env = map[string]any{
	"nodes": []any{map[string]any{"name": "a", "util": 5.0}, map[string]any{"name": "b", "util": 50.0}},
	"name":  "node-gpu-01",
	"util":  12.5,
}

func run(t *testing.T, src string, l Limits) (any, error) {
	t.Helper()
	p, err := Compile(src, expr.Env(env))
	if err != nil {
		return nil, err
	}
	return p.Run(context.Background(), env, l)
}

// TestOrdinaryExpressions: the guard changes no result.
func TestOrdinaryExpressions(t *testing.T) {
	for src, want := range map[string]any{
		`util < 15`:                           true,
		`len(filter(nodes, .util < 10)) == 1`: true,
		`name + "-x"`:                         "node-gpu-01-x",
		`repeat("ab", 3)`:                     "ababab",
		`replace(name, "gpu", "cpu")`:         "node-cpu-01",
		`join(map(nodes, .name), ",")`:        "a,b",
		`all(nodes, {.util >= 5})`:            true,
		`reduce(1..4, #acc + #, 0)`:           10,
		`sum(map(nodes, .util)) / 2`:          27.5,
	} {
		got, err := run(t, src, DefaultLimits)
		if err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", src, got, err, want)
		}
	}
}

// TestTooLarge (#27, case 2): half a million nested parentheses, or text
// past MaxBytes, are refused before the parser sees them, in one short
// line.
func TestTooLarge(t *testing.T) {
	deep := strings.Repeat("(", 524200) + "1" + strings.Repeat(")", 524200) + " > 0"
	for _, src := range []string{deep, strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65) + " > 0", "util < " + strings.Repeat("1", MaxBytes)} {
		_, err := Compile(src, expr.Env(env))
		if !errors.Is(err, ErrTooLarge) || len(err.Error()) > 200 {
			t.Errorf("%.40s…: %v", src, err)
		}
	}
	// Parentheses inside a string do not nest.
	if _, err := Compile(`name != "`+strings.Repeat("(", 100)+`"`, expr.Env(env)); err != nil {
		t.Error(err)
	}
	// A compile error shows an excerpt, not the whole text.
	long := "util < 1 && " + strings.Repeat("util < 1 && ", 300) + "nosuch > 1"
	_, err := Compile(long, expr.Env(env))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("compile error %q", err)
	}
}

// TestBudgets (#27, case 3): what used to take 20 GB, 2.2 GB or a minute
// stops at its budget, in bounded memory, with ErrBudget.
func TestBudgets(t *testing.T) {
	defer heapCeiling(t, 1<<30)()
	l := Limits{Time: 200 * time.Millisecond, Bytes: 8 << 20}
	for _, src := range []string{
		`len(repeat(repeat("a", 100000), 100000)) > 0`,
		`len(replace(replace(replace(repeat("a", 1000), "a", repeat("a", 1000)), "a", repeat("a", 1000)), "a", repeat("a", 1000))) > 0`,
		`all(1..1000, {all(1..1000, {all(1..1000, {all(1..1000, {# > 0})})})})`,
		`let r = 1..999000; all(r, {all(r, {# > 0})})`,
		`len(reduce(1..64, #acc + #acc, "ab")) > 0`,
		`let a = repeat("a", 1000); let b = a + a; let c = b + b; let d = c + c; let e = d + d; let f = e + e; let g = f + f; let h = g + g; let i = h + h; let j = i + i; let k = j + j; let m = k + k; let n = m + m; len(n + n + n + n) > 0`,
		`len(join(map(1..100000, repeat("x", 1000)), ",")) > 0`,
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := run(t, src, l)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrBudget) {
			t.Errorf("%.60s…: %v, want ErrBudget", src, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Errorf("%.60s…: allocated %d MiB", src, grew>>20)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%.60s…: took %s", src, took)
		}
	}
}

// TestCancel (#27, case 3): cancelling the context stops an evaluation.
func TestCancel(t *testing.T) {
	p, err := Compile(`let r = 1..999000; all(r, {all(r, {# > 0})})`, expr.Env(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = p.Run(ctx, env, Limits{Time: time.Hour, Bytes: 1 << 40})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
}

// TestAsBool: a guarded condition still compiles as a boolean, and a
// result of another type is still refused when it runs.
func TestAsBool(t *testing.T) {
	for _, src := range []string{`all(nodes, .util > 1)`, `len(nodes) > 1`, `name + "x" == "node-gpu-01x"`} {
		p, err := Compile(src, expr.Env(env), expr.AsBool())
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if v, err := p.Run(context.Background(), env, DefaultLimits); v != true || err != nil {
			t.Errorf("%s = %v %v", src, v, err)
		}
	}
	if _, err := Compile(`name + "x"`, expr.Env(env), expr.AsBool()); err == nil {
		t.Error("a string condition compiled as a boolean")
	}
}

// TestEachBudgetAlone: the time budget stops a computation that takes no
// memory, whatever the memory budget; the memory budget stops one that
// builds a large value, whatever the time budget (each named in the
// error). Under a hard heap ceiling: a memory budget that does not hold
// ends the test, not the machine.
func TestEachBudgetAlone(t *testing.T) {
	defer heapCeiling(t, 1<<30)()
	for _, c := range []struct {
		src  string
		l    Limits
		says string
	}{
		{`let r = 1..1000; all(r, {all(r, {all(r, {# > 0})})})`, Limits{Time: 100 * time.Millisecond, Bytes: 1 << 40}, "ran longer than 100ms"},
		{`len(repeat("abcdefgh", 50000000)) > 0`, Limits{Time: time.Hour, Bytes: 64 << 20}, "64 MiB"},
		{`len(join(map(1..100000, repeat("x", 1000)), ",")) > 0`, Limits{Time: time.Hour, Bytes: 64 << 20}, "MiB"},
	} {
		start := time.Now()
		_, err := run(t, c.src, c.l)
		if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%.50s…: %v, want the budget that says %q", c.src, err, c.says)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("%.50s…: took %s", c.src, took)
		}
	}
}

// heapCeiling panics when the process' heap passes limit bytes while the
// test runs (read every 5 ms, without stopping the world): the budgets'
// tests then fail at a gigabyte instead of taking the machine's memory.
// The returned function stops the watch.
func heapCeiling(t *testing.T, limit uint64) func() {
	t.Helper()
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > limit {
				panic(fmt.Sprintf("%s: the heap passed %d MiB: a memory budget did not hold", t.Name(), limit>>20))
			}
		}
	}()
	return func() { close(done) }
}
