package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A command template is parsed by a real shell parser (mvdan.cc/sh, as
// bash parses it) with each {field} replaced by a marker word, and is
// refused unless every placeholder is one plain argument word — unquoted
// literal text, not after a backslash, not in backquotes, a heredoc or a
// here-string, nor an assignment — of a command whose name is literal
// text, and unless no command of the template runs text as code: an
// interpreter given code (sh -c, bash, eval, source, perl -e, python -c,
// node -e, an awk or sed program, a shell reading its standard input) or
// a tool that parses its input again (xargs, ssh, su, watch, trap),
// through the wrappers that run the rest of their arguments (env, sudo,
// nice, timeout, find -exec…), however the parser resolves their spelling
// (\eval, "e"val, s''h, /bin/sh). Each value is also shell-quoted and
// must be inert text (notInert): quoting holds for one parse, and this
// makes sure there is only one (docs/rules.md, Commands).

// marker is the word a placeholder stands as while the template parses
// (marker, its number, X); markerWord finds one in printed text.
const marker = "SEEDANCEPLACEHOLDER"

var markerWord = regexp.MustCompile(marker + `[0-9]+X`)

// safeCommand refuses a command template a value could escape from.
func safeCommand(tmpl string) error {
	spots := placeholder.FindAllStringIndex(tmpl, -1)
	if len(spots) == 0 {
		return nil
	}
	var b strings.Builder
	last := 0
	for i, s := range spots {
		b.WriteString(tmpl[last:s[0]] + marker + strconv.Itoa(i) + "X")
		last = s[1]
	}
	b.WriteString(tmpl[last:])
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(b.String()), "")
	if err != nil {
		return fmt.Errorf("not a shell command line (bash could not parse it): %v", err)
	}
	c := &cmdCheck{names: make([]string, len(spots)), plain: make([]bool, len(spots))}
	for i, s := range spots {
		c.names[i] = tmpl[s[0]:s[1]]
	}
	syntax.Walk(f, c.visit)
	if c.err != nil {
		return c.err
	}
	for i, ok := range c.plain {
		if !ok {
			return fmt.Errorf("%s is not a plain argument of a command (it is quoted, escaped, in backquotes, a heredoc, a here-string, an assignment or the command's name): write it unquoted as an argument, e.g. kubectl cordon {name} — seedance quotes each value for its position", c.names[i])
		}
	}
	return nil
}

// cmdCheck walks a parsed template: plain[i] is set when placeholder i is
// found where a value is one word; err is the first refusal.
type cmdCheck struct {
	names []string
	plain []bool
	err   error
}

func (c *cmdCheck) visit(n syntax.Node) bool {
	if c.err != nil {
		return false
	}
	switch n := n.(type) {
	case *syntax.CmdSubst:
		return !n.Backquotes // a placeholder in backquotes stays unmarked: refused
	case *syntax.CallExpr:
		c.call(n.Args)
	case *syntax.Redirect:
		switch n.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			c.markPlain(n.Word) // a file's name
		}
	}
	return true
}

// call checks one simple command: its name must be literal, it must not
// run text as code, and its plain words are marked.
func (c *cmdCheck) call(args []*syntax.Word) {
	for len(args) > 0 {
		name, ok := literal(args[0])
		if !ok || strings.Contains(name, marker) {
			c.err = fmt.Errorf("a command whose name is not literal text (%s) in a template with a {field}: its name could be anything, a shell among them", wordText(args[0]))
			return
		}
		for _, a := range args[1:] {
			c.markPlain(a)
		}
		next, why := runs(name[strings.LastIndexByte(name, '/')+1:], args)
		if why != "" {
			c.err = fmt.Errorf("%s runs text as code, and a {field}'s value could become code there: write the command without it, or pass the value to a script as an argument (./notify.sh {name})", why)
			return
		}
		args = next // a wrapper's command, checked in turn
	}
}

// markPlain marks the placeholders of w when w is literal text only, each
// not escaped by a backslash.
func (c *cmdCheck) markPlain(w *syntax.Word) {
	if w == nil {
		return
	}
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return
		}
	}
	for _, p := range w.Parts {
		v := p.(*syntax.Lit).Value
		for i := strings.Index(v, marker); i >= 0; i = strings.Index(v, marker) {
			rest := v[i+len(marker):]
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, 'X')])
			if err == nil && n < len(c.plain) && (i == 0 || v[i-1] != '\\') {
				c.plain[n] = true
			}
			v = rest
		}
	}
}

// literal is a word's text when it has no expansion: literal parts with
// their backslashes resolved, single-quoted and double-quoted text.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// wordText is a word as written, for an error.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return markerWord.ReplaceAllString(b.String(), "{field}")
}
