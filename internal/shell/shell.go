// Package shell quotes words for POSIX shells and checks the names that
// seedance puts into the commands it prints, so that no node, pod or label
// name can inject shell.
package shell

import (
	"regexp"
	"strconv"
	"strings"
)

// Dialects of the commands seedance prints.
const (
	Kubectl = "kubectl"
	Slurm   = "slurm"
	None    = "none"
)

var (
	// DNS1123Subdomain matches Kubernetes node and pod names.
	DNS1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// DNS1123Label matches Kubernetes namespaces.
	DNS1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// SlurmName matches Slurm node names: letters, digits, '-', '_', '.'.
	SlurmName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	safe      = regexp.MustCompile(`^[A-Za-z0-9@%_+=:,./-]+$`)
)

// ValidNodeName reports whether name is a valid node name in the dialect.
func ValidNodeName(dialect, name string) bool {
	switch dialect {
	case Kubectl:
		return len(name) <= 253 && DNS1123Subdomain.MatchString(name)
	case Slurm:
		return len(name) <= 253 && SlurmName.MatchString(name)
	}
	return true
}

// ValidPod reports whether ns/name is a valid Kubernetes pod reference.
func ValidPod(ns, name string) bool {
	return len(ns) <= 63 && DNS1123Label.MatchString(ns) && len(name) <= 253 && DNS1123Subdomain.MatchString(name)
}

// Inert reports whether s is plain text that no parse of a command line
// can run or split, however many times it is parsed again (sh -c, eval,
// python -c, flock -c, sed's e…): letters, digits and @%_+=:,./- only, not
// leading with '-' (an option) unless it is a number. Quoting holds for one
// parse; a value of a user's command template must be inert too.
func Inert(s string) bool {
	if s == "" {
		return true
	}
	if !safe.MatchString(s) {
		return false
	}
	if s[0] == '-' {
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	}
	return true
}

// Quote quotes s for a POSIX shell: left alone when it holds only safe
// characters, else single-quoted with embedded quotes written as '\”.
func Quote(s string) string {
	if s != "" && safe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
