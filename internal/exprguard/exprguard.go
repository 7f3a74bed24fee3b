// Package exprguard compiles and runs the expressions users write (policy
// rules' conditions, CI gates) within bounds, so that no expression can
// crash, hang or exhaust a long-running seedance: its text is bounded in
// size and nesting before the parser sees it, and each evaluation in time
// and in the memory its values take, checked at every step that can grow
// either (each iteration of a closure, each call, each concatenation).
// Cancelling the context stops an evaluation at its next step.
package exprguard

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Bounds of an expression's text, checked before it is parsed.
const (
	MaxBytes = 4096 // a condition or gate is a line or a few
	MaxDepth = 64   // nesting of (), [] and {}
	maxNodes = 2000 // nodes of the parsed expression
	// vmElements is expr's own bound on the elements the lists, maps and
	// ranges of one evaluation make (vm.VM.MemoryBudget's default).
	vmElements = 1_000_000
)

// Limits bound one evaluation.
type Limits struct {
	Time  time.Duration // wall time of one evaluation
	Bytes int64         // memory its values take, summed over the evaluation
}

// DefaultLimits are generous for any real rule (which takes microseconds
// and a few hundred bytes) and small enough that a hostile one cannot hurt
// the daemon.
var DefaultLimits = Limits{Time: time.Second, Bytes: 64 << 20}

// ErrBudget is an evaluation that went over its Limits.
var ErrBudget = errors.New("over its budget")

// ErrTooLarge is an expression past MaxBytes or MaxDepth.
var ErrTooLarge = errors.New("expression too large")

// guardFn is the function the patched program calls at each step.
const guardFn = "__seedance_step"

// Program is a compiled expression and the state of its evaluation.
type Program struct {
	prog *vm.Program
	st   *state
}

// state is one evaluation's budget; a Program runs one evaluation at a
// time.
type state struct {
	ctx      context.Context
	deadline time.Time
	limits   Limits
	bytes    int64
	steps    uint32
}

// Check refuses a text past MaxBytes or nested deeper than MaxDepth,
// naming where, with a short excerpt: the parser recurses per level, and a
// text of half a million parentheses would overflow its stack.
func Check(src string) error {
	if len(src) > MaxBytes {
		return fmt.Errorf("%w: %d bytes, more than %d: %s", ErrTooLarge, len(src), MaxBytes, Excerpt(src, 0))
	}
	depth := 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'', '`':
			quote = c
		case '(', '[', '{':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("%w: nested deeper than %d levels at byte %d: %s", ErrTooLarge, MaxDepth, i+1, Excerpt(src, i))
			}
		case ')', ']', '}':
			depth--
		}
	}
	return nil
}

// Excerpt is a short, one-line piece of src around byte at, quoted, for
// an error message.
func Excerpt(src string, at int) string {
	const span = 30
	lo, hi := max(0, at-span), min(len(src), at+span)
	s := strings.Join(strings.Fields(src[lo:hi]), " ")
	if lo > 0 {
		s = "…" + s
	}
	if hi < len(src) {
		s += "…"
	}
	return fmt.Sprintf("%q", s)
}

// Compile checks src (Check), parses and type-checks it with opts, and
// patches it so that each step that can take time or memory goes through
// the budget. Errors are one line with an excerpt, never the whole text.
func Compile(src string, opts ...expr.Option) (*Program, error) {
	if err := Check(src); err != nil {
		return nil, err
	}
	st := &state{}
	all := append([]expr.Option{
		expr.MaxNodes(maxNodes),
		expr.Function(guardFn, st.step, new(func(any) bool)),
		expr.Function("repeat", st.repeat, new(func(string, int) string)),
		expr.Function("replace", st.replace, new(func(string, string, string) string)),
		expr.Function("join", st.join, new(func([]any, string) string), new(func([]any) string)),
		expr.Patch(stepper{n: new(int)}),
	}, opts...)
	prog, err := expr.Compile(src, all...)
	if err != nil {
		return nil, errors.New(Short(err, src))
	}
	return &Program{prog: prog, st: st}, nil
}

// Short is a compile or run error of src in one line: expr's message and
// position, with an excerpt instead of the whole text under a caret.
func Short(err error, src string) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		at := 0
		if fe.Line == 1 {
			at = fe.Column
		}
		return fmt.Sprintf("%s (%d:%d) at %s", shortLine(fe.Message), fe.Line, fe.Column+1, Excerpt(src, at))
	}
	return shortLine(err.Error())
}

func shortLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Run evaluates the program over env within limits; ctx's end stops it.
// Going over the budget is ErrBudget; the context's end is its error.
func (p *Program) Run(ctx context.Context, env any, l Limits) (out any, err error) {
	*p.st = state{ctx: ctx, deadline: time.Now().Add(l.Time), limits: l}
	defer func() { p.st.ctx = nil }()
	out, err = expr.Run(p.prog, env)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		var be budgetError
		if errors.As(err, &be) {
			return nil, fmt.Errorf("%w (%s)", ErrBudget, be.what)
		}
		if strings.Contains(err.Error(), "memory budget exceeded") {
			// expr's own bound on the elements its ranges, lists and maps make
			return nil, fmt.Errorf("%w (its lists took more than %d elements)", ErrBudget, vmElements)
		}
	}
	return out, err
}

// budgetError is raised (as a panic expr turns into an error) by a step
// over the budget.
type budgetError struct{ what string }

func (e budgetError) Error() string { return string(ErrBudget.Error()) + ": " + e.what }

// step is called with each closure's value, call's result and sum: it
// counts the memory that value takes and checks the time and the context.
func (s *state) step(args ...any) (any, error) {
	var v any
	if len(args) > 0 {
		v = args[0]
	}
	s.bytes += sizeOf(v)
	if s.bytes > s.limits.Bytes {
		return nil, budgetError{fmt.Sprintf("its values took more than %d MiB", s.limits.Bytes>>20)}
	}
	if s.steps++; s.steps%64 == 0 || s.bytes > s.limits.Bytes/2 {
		if s.ctx != nil && s.ctx.Err() != nil {
			return nil, s.ctx.Err()
		}
		if time.Now().After(s.deadline) {
			return nil, budgetError{fmt.Sprintf("it ran longer than %s", s.limits.Time)}
		}
	}
	return true, nil
}

// grow checks, before a builtin makes a value of n bytes, that it fits.
func (s *state) grow(n int64) error {
	if n > s.limits.Bytes-s.bytes {
		return budgetError{fmt.Sprintf("a value of %d bytes would pass its %d MiB", n, s.limits.Bytes>>20)}
	}
	return nil
}

// repeat, replace and join are expr's builtins, each refused before it
// makes a value larger than what is left of the budget.
func (s *state) repeat(args ...any) (any, error) {
	str, _ := args[0].(string)
	n, _ := args[1].(int)
	if n < 0 {
		return nil, fmt.Errorf("repeat: negative count %d", n)
	}
	if err := s.grow(int64(len(str)) * int64(n)); err != nil {
		return nil, err
	}
	return strings.Repeat(str, n), nil
}

func (s *state) replace(args ...any) (any, error) {
	str, _ := args[0].(string)
	old, _ := args[1].(string)
	repl, _ := args[2].(string)
	n := int64(strings.Count(str, old))
	if err := s.grow(int64(len(str)) + n*int64(len(repl))); err != nil {
		return nil, err
	}
	return strings.ReplaceAll(str, old, repl), nil
}

func (s *state) join(args ...any) (any, error) {
	sep := ""
	if len(args) > 1 {
		sep, _ = args[1].(string)
	}
	list, _ := args[0].([]any)
	total := int64(len(sep)) * int64(len(list))
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = fmt.Sprint(x)
		total += int64(len(parts[i]))
	}
	if err := s.grow(total); err != nil {
		return nil, err
	}
	return strings.Join(parts, sep), nil
}

// sizeOf estimates the memory a value takes: a string its bytes, a list
// or map its entries (not what they point to, which was counted when it
// was made).
func sizeOf(v any) int64 {
	switch x := v.(type) {
	case nil, bool, int, float64:
		return 8
	case string:
		return int64(len(x)) + 16
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return int64(rv.Len())*16 + 24
	case reflect.Map:
		return int64(rv.Len())*64 + 48
	case reflect.String:
		return int64(rv.Len()) + 16
	}
	return 16
}

// stepper patches the parsed expression: each closure's body, each call
// and each + goes through the step function, keeping its type (wrap).
type stepper struct{ n *int }

func (p stepper) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.PredicateNode:
		if !isStep(x.Node) {
			x.Node = p.wrap(x.Node)
		}
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); !ok || id.Value != guardFn {
			ast.Patch(n, p.wrap(x))
		}
	case *ast.BuiltinNode:
		ast.Patch(n, p.wrap(x))
	case *ast.BinaryNode:
		if x.Operator == "+" {
			ast.Patch(n, p.wrap(x))
		}
	}
}

func isStep(n ast.Node) bool {
	v, ok := n.(*ast.VariableDeclaratorNode)
	return ok && strings.HasPrefix(v.Name, guardFn)
}

// wrap is `let v = n; step(v) ? v : v`: n evaluated once, its value
// counted by the step function, and the whole typed as n is, so that the
// type checks (a condition must be a boolean) still apply.
func (p stepper) wrap(n ast.Node) ast.Node {
	*p.n++
	name := fmt.Sprintf("%s%d", guardFn, *p.n)
	ref := func() ast.Node { return &ast.IdentifierNode{Value: name} }
	out := &ast.VariableDeclaratorNode{Name: name, Value: n, Expr: &ast.ConditionalNode{
		Cond: &ast.CallNode{Callee: &ast.IdentifierNode{Value: guardFn}, Arguments: []ast.Node{ref()}},
		Exp1: ref(), Exp2: ref()}}
	out.SetLocation(n.Location())
	return out
}
