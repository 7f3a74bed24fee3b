package setting

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// The registries that own names a setting may take (output formats,
// reports, plan dialects, sources) register them here, and each source
// its section of the configuration, so that package settings validates and
// documents the names without importing the packages that own them
// (docs/architecture.md): render, recommend and source register at init,
// and the seedance binary links them all.

// Kinds of names.
const (
	KindFormat  = "format"
	KindReport  = "report"
	KindDialect = "dialect"
	KindSource  = "source"
)

// Names is a set of names a registry owns: their list, in the order help
// shows them, and the check of one name (a one-line error naming the
// choices).
type Names struct {
	List  func() []string
	Check func(name string) error
}

// Section is a source's section of the configuration: the zero value of
// its settings type, which the config decodes into, and its keys.
type Section struct {
	Name     string
	Settings any
	Keys     []Key
}

var (
	regMu    sync.Mutex
	names    = map[string]Names{}
	sections = map[string]Section{}
)

// RegisterNames registers the names of a kind; a kind registered twice is
// a programming error.
func RegisterNames(kind string, n Names) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := names[kind]; dup {
		panic("setting: names of " + kind + " registered twice")
	}
	names[kind] = n
}

// NameList is the registered names of a kind (none when the kind's owner
// is not linked).
func NameList(kind string) []string {
	n, ok := namesOf(kind)
	if !ok {
		return nil
	}
	return slices.Clone(n.List())
}

// CheckName checks a name of a kind with its owner's check. A kind whose
// owner is not linked into the program is an error: the name cannot be
// known good.
func CheckName(kind, name string) error {
	n, ok := namesOf(kind)
	if !ok {
		return fmt.Errorf("no %s is known to this program (its registry is not linked)", kind)
	}
	return n.Check(name)
}

func namesOf(kind string) (Names, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	n, ok := names[kind]
	return n, ok
}

// RegisterSection registers a source's section; a section registered
// twice is a programming error.
func RegisterSection(s Section) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := sections[s.Name]; dup {
		panic("setting: section " + s.Name + " registered twice")
	}
	sections[s.Name] = s
}

// Sections are the registered sections, by name.
func Sections() []Section {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Section, 0, len(sections))
	for _, s := range sections {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
