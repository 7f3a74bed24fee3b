package settings

import (
	"github.com/seedance/seedance/internal/setting"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/source"
)

// TestConfigurationDocUpToDate: docs/configuration.md's settings tables are
// those the settings table writes; -update rewrites them.
func TestConfigurationDocUpToDate(t *testing.T) {
	const path = "../docs/configuration.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- settings:begin -->\n", "<!-- settings:end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q markers", path, begin, end)
	}
	want := Doc()
	if got := string(doc[i+len(begin) : j]); got != want {
		if *golden.Update {
			out := string(doc[:i+len(begin)]) + want + string(doc[j:])
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("%s is stale: run make update-golden", path)
	}
	for _, k := range Keys() {
		if k.Range != nil && !strings.Contains(want, "| `"+k.Key+"` | "+rangeText(k)+" |") {
			t.Errorf("no range row for %s", k.Key)
		}
	}
}

// TestConfigKeysMatchStruct: every setting has a field of Config of its
// default's type, and every field a setting, so that the struct viper
// decodes into cannot drift from the one table of
func TestConfigKeysMatchStruct(t *testing.T) {
	fields := map[string]reflect.Value{}
	collect(reflect.ValueOf(&Config{}).Elem(), "", fields)
	delete(fields, "units") // a list the file gives, checked by checkUnits (docs/units.md): no flag or variable sets it
	for _, r := range source.Registered() {
		collect(reflect.ValueOf(r.Settings), r.Name, fields)
		for _, k := range r.Keys {
			if !strings.HasPrefix(k.Key, r.Name+".") {
				t.Errorf("source %s declares %s, outside its section", r.Name, k.Key)
			}
		}
	}
	for _, k := range Keys() {
		if k.NoDefault {
			continue
		}
		f, ok := fields[k.Key]
		if !ok {
			t.Errorf("setting %s has no Config field", k.Key)
			continue
		}
		delete(fields, k.Key)
		want := reflect.TypeOf(k.Default)
		if _, isDur := k.Default.(setting.Dur); isDur {
			want = reflect.TypeOf(time.Duration(0))
		}
		if f.Type() != want {
			t.Errorf("setting %s: default is a %v, its field a %v", k.Key, want, f.Type())
		}
	}
	for key := range fields {
		t.Errorf("Config field %s has no setting", key)
	}
}

// TestSourceHelpNamesTheRegistry: --source's help lists exactly the
// registered sources.
func TestSourceHelpNamesTheRegistry(t *testing.T) {
	for _, k := range Keys() {
		if k.Key != "profile.source" {
			continue
		}
		names := source.Names()
		want := "sample source: " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
		if k.Help != want {
			t.Fatalf("help %q, want %q", k.Help, want)
		}
		return
	}
	t.Fatal("no profile.source setting")
}

// TestConfigFallbackPath: with no flag, SEEDANCE_CONFIG, XDG file or
// ~/.config file, the path is /etc/seedance/config.yaml, which may be
// missing.
func TestConfigFallbackPath(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	if p, must := configPath("", func(k string) string { return env[k] }); p != "/etc/seedance/config.yaml" || must {
		t.Fatalf("fallback = %s %v", p, must)
	}
}
