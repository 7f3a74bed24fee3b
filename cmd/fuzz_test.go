package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"
)

// FuzzConfigFile: any config file is read, or refused with one line; it
// never panics.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte("profile:\n  interval: 1s\n  checkpoint: 60s\nnvml:\n  pods_dir: /var/log/pods\n"))
	f.Add([]byte("pricing:\n  gpu_hour_usd:\n    H100: 2.49\n  default_gpu_hour_usd: 1.00\n"))
	f.Add([]byte("prometheus:\n  basic_auth: {username: a, password: b}\n  http_headers:\n    X: {values: [y]}\n"))
	f.Add([]byte("analyze: [1, 2]\n"))
	f.Add([]byte("&a [*a, *a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		v := settings.NewViper()
		if _, err := settings.Load(v, path, func(string) string { return "" }); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		f := &Factory{viper: v}
		if _, err := f.Config(); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
		for _, section := range []string{"prometheus", "scrape"} {
			_, _ = settings.HTTP(v, section) // an error is a result here; a panic is not
		}
	})
}

// TestConfigFileSizeBound: a config file past 1 MiB (or /dev/zero) is
// refused at once.
func TestConfigFileSizeBound(t *testing.T) {
	for _, path := range []string{"/dev/zero", writeConfig(t, "# "+strings.Repeat("x", 2<<20)+"\n")} {
		r := run(t, map[string]string{"SEEDANCE_CONFIG": path}, "config", "view")
		if r.code != exit.Usage || !strings.Contains(r.errOut, "not a seedance settings file") && !strings.Contains(r.errOut, "not a regular file") {
			t.Errorf("%s: exit %d %s", path, r.code, r.errOut)
		}
	}
}
