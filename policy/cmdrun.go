package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// reparse are the commands that parse text as a command line again
// whatever their arguments, with why.
var reparse = map[string]string{
	"eval": "eval", "source": "source", ".": ". (source)", "trap": "trap", "ssh": "ssh (the remote shell parses its command)",
	"su": "su", "watch": "watch (it runs sh -c)", "xargs": "xargs (it splits and unquotes its input)", "parallel": "parallel (it runs sh -c)",
	"at": "at (it reads commands)", "batch": "batch (it reads commands)", "tmux": "tmux (it runs shell commands)", "screen": "screen",
	"busybox": "busybox (its applets include shells)", "toybox": "toybox (its applets include shells)", "script": "script (-c runs a shell)",
}

// shells run code given with -c, or read it from their standard input
// when no script is named.
var shells = map[string]bool{
	"sh": true, "bash": true, "rbash": true, "zsh": true, "dash": true, "ash": true, "ksh": true, "mksh": true, "pdksh": true, "oksh": true,
	"yash": true, "posh": true, "csh": true, "tcsh": true, "fish": true, "elvish": true, "nu": true, "pwsh": true, "powershell": true,
}

// interpreters and the short options that give them code (a cluster with
// one of these letters); like shells, one without a script reads code
// from its standard input.
var interpreters = map[string]string{
	"python": "c", "pypy": "c", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "bun": "e", "deno": "", "php": "rR",
	"lua": "e", "luajit": "e", "julia": "e", "Rscript": "e", "R": "e", "tclsh": "", "expect": "c", "guile": "c", "racket": "e",
	"osascript": "e", "groovy": "e", "scala": "e", "jshell": "", "irb": "", "gdb": "", "jq": "",
}

// programs take a program as their first operand unless -f names a file.
var programs = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true, "sed": true, "gsed": true, "perl6": true}

// wrappers run the rest of their arguments as a command: how many
// operands come before it, and their options that take a value.
var wrappers = map[string]struct {
	operands  int
	valueOpts string // short options with a value
}{
	"env": {0, "uCS"}, "sudo": {0, "ugCDhpRrtTU"}, "doas": {0, "uC"}, "nice": {0, "n"}, "nohup": {0, ""}, "time": {0, "fo"},
	"timeout": {1, "sk"}, "stdbuf": {0, "ioe"}, "ionice": {0, "cnp"}, "chrt": {1, ""}, "taskset": {1, ""}, "setsid": {0, ""},
	"command": {0, ""}, "builtin": {0, ""}, "exec": {0, "a"}, "flock": {1, "wE"}, "chroot": {1, ""}, "nsenter": {0, "tSG"},
	"srun": {0, "NnpAJtwxcomeiDC"}, "systemd-run": {0, "upM"}, "unshare": {0, ""}, "runuser": {0, "ugl"}, "caffeinate": {0, "t"},
}

// runs says whether the command args (its name first, as base) runs text
// as code (why), or what command it runs in turn (next), or neither.
func runs(base string, args []*syntax.Word) (next []*syntax.Word, why string) {
	words := make([]string, len(args))
	for i, a := range args {
		words[i], _ = literal(a)
	}
	name := strings.TrimRight(base, "0123456789.")
	switch {
	case reparse[base] != "":
		return nil, reparse[base]
	case shells[name]:
		if givesCode(words[1:], "cs", []string{"--command", "--init-file", "--rcfile"}) {
			return nil, base + " given code"
		}
	case hasKey(interpreters, name):
		if givesCode(words[1:], interpreters[name], []string{"--eval", "--print", "--command", "--exec", "--execute", "--expression", "--run"}) {
			return nil, base + " given code"
		}
	case programs[name]:
		if !hasOpt(words[1:], "f", "--file") {
			return nil, base + " given a program (" + base + " programs can run commands)"
		}
	case base == "find":
		return findExec(args)
	case base == "kubectl" || base == "docker" || base == "podman" || base == "crictl" || base == "nerdctl":
		return afterDashDash(args, words), ""
	case base == "sbatch" && hasOpt(words[1:], "", "--wrap"):
		return nil, "sbatch --wrap (it runs sh -c)"
	case base == "sudo" && hasOpt(words[1:], "si", "--shell", "--login"), base == "flock" && (slices.Contains(words, "-c") || slices.Contains(words, "--command")),
		base == "env" && hasOpt(words[1:], "S", "--split-string"), base == "runuser" && hasOpt(words[1:], "c", "--command"):
		return nil, base + " given a command line"
	}
	if w, ok := wrappers[base]; ok {
		return wrapped(args, words, w.operands, w.valueOpts), ""
	}
	return nil, ""
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// givesCode: a short-option cluster with one of the code letters, a long
// option of longs, or no operand at all (code read from standard input).
func givesCode(words []string, letters string, longs []string) bool {
	if hasOpt(words, letters, longs...) {
		return true
	}
	for _, w := range words {
		if w == "--" || !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// hasOpt: a short-option cluster (-xc) holding one of letters, or one of
// longs (alone or as --long=value), before the first operand.
func hasOpt(words []string, letters string, longs ...string) bool {
	for _, w := range words {
		switch {
		case w == "--" || !strings.HasPrefix(w, "-") || w == "-":
			return false
		case strings.HasPrefix(w, "--"):
			for _, l := range longs {
				if w == l || strings.HasPrefix(w, l+"=") {
					return true
				}
			}
		case strings.ContainsAny(w[1:], letters) && letters != "":
			return true
		}
	}
	return false
}

// wrapped is the command a wrapper runs: past its options (and their
// values), its NAME=VALUE assignments (env) and its operands.
func wrapped(args []*syntax.Word, words []string, operands int, valueOpts string) []*syntax.Word {
	i := 1
	for ; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			i++
			break
		}
		opt := strings.HasPrefix(w, "-") && len(w) > 1
		if !opt && (!strings.Contains(w, "=") || strings.HasPrefix(w, "=")) {
			break // the first operand
		}
		if opt && !strings.HasPrefix(w, "--") && valueOpts != "" && strings.ContainsAny(w[len(w)-1:], valueOpts) {
			i++ // the option's value is the next word
		}
	}
	i += operands
	if i >= len(args) {
		return nil
	}
	return args[i:]
}

// findExec is the command of find's -exec, -execdir, -ok or -okdir, up to
// its ; or +.
func findExec(args []*syntax.Word) ([]*syntax.Word, string) {
	for i, a := range args {
		if w, _ := literal(a); w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir" {
			end := len(args)
			for j := i + 1; j < len(args); j++ {
				if w, _ := literal(args[j]); w == ";" || w == "+" {
					end = j
					break
				}
			}
			if i+1 < end {
				return args[i+1 : end], ""
			}
		}
	}
	return nil, ""
}

// afterDashDash is what follows --: the command kubectl exec or docker
// exec runs in a container.
func afterDashDash(args []*syntax.Word, words []string) []*syntax.Word {
	for i, w := range words {
		if w == "--" && i+1 < len(args) {
			return args[i+1:]
		}
	}
	return nil
}
