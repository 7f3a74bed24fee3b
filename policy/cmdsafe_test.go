package policy

import (
	"strings"
	"testing"
)

// TestCommandParsedByShell (#56): the fault campaign's spellings that got
// past the word match, and interpreters it did not list, are refused by
// the shell parser, each with one line; plain arguments of commands that
// run as they are — through wrappers, find -exec, kubectl exec — pass,
// and so does find's "." that the word match took for source.
func TestCommandParsedByShell(t *testing.T) {
	compile := func(cmd string) error {
		_, err := Compile([]Rule{{Name: "x", When: "true", Suggest: Suggest{Text: "t", Command: cmd}}}, "test")
		return err
	}
	for _, cmd := range []string{
		`\eval echo {name}`, `"e"val echo {name}`, `s''h -c {name}`, `S=sh; $S -c {name}`, `\source {name}`, `'.' {name}`,
		`mksh -c {name}`, `csh -c {name}`, `/usr/bin/python3 -c {name}`, `python3.11 -c 'import sys' {name}`, `node -e {name}`,
		`perl -e {name}`, `nice -n 5 perl -E {name}`, `ruby -e {name}`, `php -r {name}`, `bash -xc {name}`, `bash --rcfile {name}`,
		`awk '{print}' {name}`, `gawk -v x={name} 'BEGIN{}'`, `sed s/a/b/ {name}`,
		`env sh -c {name}`, `/usr/bin/env python3 -c {name}`, `env -S 'sh -c' {name}`, `env -u HOME bash -c {name}`,
		`sudo -u root bash -c {name}`, `sudo -s {name}`, `timeout 5 bash -c {name}`, `flock /tmp/l -c {name}`,
		`find . -exec sh -c {name} ';'`, `find . -exec {name} ';'`, `kubectl exec pod/x -- sh -c {name}`,
		`echo {name} | python3`, `echo {name} | sh`, `echo {name} | xargs kubectl cordon`, `bash <<< {name}`, "cat <<EOF\n{name}\nEOF",
		`{name}`, `N={name} kubectl get node`, `echo $(sh -c {name})`, "echo `kubectl get {name}`", `sbatch --wrap {name}`,
		`echo "{name}"`, `echo '{name}'`, `echo \{name}`, `echo $'{name}'`, `ssh gpu-01 kubectl cordon {name}`, `watch kubectl get node {name}`,
		`echo {name} |`,
	} {
		err := compile(cmd)
		if err == nil || !strings.Contains(err.Error(), "suggest.command:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line refusal", cmd, err)
		}
	}
	for _, cmd := range []string{
		`find . -name {name}.log -delete`, `find /var/log -name {name} -exec gzip {} ';'`, `python3 notify.py {name}`, `bash ./notify.sh {name}`,
		`echo {name} > /tmp/{name}.log`, `kubectl exec deploy/x -- /notify {name}`, `sudo -u ops kubectl cordon {name}`, `timeout 30 kubectl drain {name}`,
		`env KUBECONFIG=/k kubectl label node {name} a=b`, `echo $(kubectl get node {name} -o name)`, `nice -n 5 kubectl cordon {name}`,
		`scontrol update NodeName={name} State=DRAIN Reason=idle`, `echo x && kubectl cordon {name}`, `awk -f script.awk {name}`,
	} {
		if err := compile(cmd); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
}
