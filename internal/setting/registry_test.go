package setting

import (
	"errors"
	"strings"
	"testing"
)

// TestRegistry: a kind's names and check are its owner's; a kind nobody
// registered is an error, not a pass; a kind or section registered twice
// is a programming error; sections come back by name.
func TestRegistry(t *testing.T) {
	if err := CheckName("test-none", "x"); err == nil || !strings.Contains(err.Error(), "no test-none is known") {
		t.Errorf("an unregistered kind: %v", err)
	}
	if NameList("test-none") != nil {
		t.Error("an unregistered kind has names")
	}
	RegisterNames("test-kind", Names{List: func() []string { return []string{"a", "b"} }, Check: func(n string) error {
		if n != "a" && n != "b" {
			return errors.New("unknown " + n)
		}
		return nil
	}})
	if err := CheckName("test-kind", "b"); err != nil {
		t.Error(err)
	}
	if err := CheckName("test-kind", "c"); err == nil || err.Error() != "unknown c" {
		t.Errorf("the owner's check: %v", err)
	}
	if l := NameList("test-kind"); strings.Join(l, ",") != "a,b" {
		t.Errorf("names %v", l)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a kind registered twice")
			}
		}()
		RegisterNames("test-kind", Names{})
	}()
	RegisterSection(Section{Name: "test-z"})
	RegisterSection(Section{Name: "test-a", Keys: []Key{{Key: "test-a.x"}}})
	var got []string
	for _, s := range Sections() {
		if strings.HasPrefix(s.Name, "test-") {
			got = append(got, s.Name)
		}
	}
	if strings.Join(got, ",") != "test-a,test-z" {
		t.Errorf("sections %v", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a section registered twice")
			}
		}()
		RegisterSection(Section{Name: "test-a"})
	}()
}
