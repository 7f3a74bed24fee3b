package exprguard

import (
	"context"
	"testing"

	"github.com/expr-lang/expr"
)

// benchRule is a typical rule condition over a node's fields.
const benchRule = `util < 15 && len(filter(nodes, .util < 10)) >= 1 && name != ""`

// BenchmarkRule: the same condition, plain (expr-lang alone, the
// baseline) and guarded, in one run (docs/performance.md).
func BenchmarkRule(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		p, err := expr.Compile(benchRule, expr.Env(env), expr.AsBool())
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := expr.Run(p, env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("guarded", func(b *testing.B) {
		p, err := Compile(benchRule, expr.Env(env), expr.AsBool())
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := p.Run(context.Background(), env, DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
}
