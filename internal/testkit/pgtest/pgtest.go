// Package pgtest starts a real PostgreSQL server for tests, on 127.0.0.1
// in a temporary directory, with Debian's postgresql binaries (.ci/run
// installs them). As root, the server runs as the postgres user, which
// PostgreSQL requires. Without the binaries a test is skipped, saying how
// to get them, or fails under CI.
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/internal/testkit/testnet"
)

// bin finds the directory of initdb and postgres: Debian's newest
// /usr/lib/postgresql/N/bin, else $PATH.
func bin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	p, err := exec.LookPath("initdb")
	if err != nil {
		return "", fmt.Errorf("no initdb in /usr/lib/postgresql/*/bin or on $PATH")
	}
	return filepath.Dir(p), nil
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start starts a server with a database "seedance" and returns its DSN; it
// is stopped when the test ends.
func Start(t testing.TB) string {
	t.Helper()
	engine.SkipShort(t, "starts PostgreSQL")
	dir, err := bin()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is not installed (.ci/run installs Debian's postgresql): %v", err)
		}
		t.Skipf("needs PostgreSQL: apt-get install postgresql (%v)", err)
	}
	data, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	cred := credential(t, data)
	run := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(dir, name), args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		c.Env = append(os.Environ(), "LC_ALL=C")
		return c
	}
	db := filepath.Join(data, "db")
	if out, err := run("initdb", "-D", db, "-U", "seedance", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := testnet.FreePort(t)
	logf, err := os.Create(filepath.Join(data, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv := run("postgres", "-D", db, "-p", strconv.Itoa(port), "-k", data, "-h", "127.0.0.1", "-c", "fsync=off")
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Wait(); close(done) }()
	t.Cleanup(func() { _ = srv.Process.Signal(syscall.SIGINT); <-done })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("postgres exited:\n%s", log)
		default:
		}
		out, err := run("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "seedance", "-d", "postgres", "-c", "CREATE DATABASE seedance").CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres did not accept connections in 60s: %v\n%s", err, out)
		}
	}
	return fmt.Sprintf("postgres://seedance@127.0.0.1:%d/seedance?sslmode=disable", port)
}

// credential is the postgres user when running as root (PostgreSQL will
// not run as root), nil otherwise; data is made theirs.
func credential(t testing.TB, data string) *syscall.Credential {
	if os.Getuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, PostgreSQL needs the postgres user (Debian's postgresql package adds it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(data, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
