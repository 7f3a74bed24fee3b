package cmd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/internal/testkit/slurmtest"
)

// TestReclaimFaults (#55): reclaim as separate processes on one PostgreSQL
// ledger and a real slurmctld, with its faults made real:
//   - two replicas run the first pass, the second while the first is
//     delivering its notices: each job is notified once;
//   - the database unreachable (its connections cut): the pass exits 1 with
//     one line, nothing notified or acted;
//   - a pass SIGKILLed inside its action (its scontrol requeuehold held
//     back until the kill, then left to run on and requeue the job): its
//     claim stays; two replicas then run at once: the other job is
//     requeued exactly once, the claimed one waits; a pass after the claim
//     went stale finds the claimed job held and records it acted;
//   - nothing is notified twice and no job is requeued twice (Restarts=1).
func TestReclaimFaults(t *testing.T) {
	c := slurmtest.Start(t, "node-gpu-01")
	c.UseConf(t)
	env := os.Environ() // SLURM_CONF among them
	jobs := []string{c.Submit(t, "--requeue", "--gres=gpu:1"), c.Submit(t, "--requeue", "--gres=gpu:1")}
	for _, id := range jobs {
		c.WaitFor(t, func() bool { return c.Job(t, id, "JobState") == "RUNNING" }, "job "+id+" running")
	}
	_, hostPortDB, _ := strings.Cut(pgtest.Start(t), "@")
	db := newTCPCut(t, hostPortDB)
	dir := t.TempDir()
	cfgFile, notices := filepath.Join(dir, "seedance.yaml"), filepath.Join(dir, "notices.jsonl")
	// Each notice takes 2 s to deliver: a replica started once the first
	// notice is written reads the episode the first replica is notifying.
	if err := os.WriteFile(cfgFile, []byte(fmt.Sprintf("reclaim:\n  grace: 0s\n  max_namespace_share: 1\n  command: [sh, -c, 'cat >> %s; sleep 2']\n", notices)), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	now, later := filepath.Join(dir, "now.json"), filepath.Join(dir, "later.json")
	reclaimSlurmProfile(t, now, t0, jobs...)
	reclaimSlurmProfile(t, later, t0.Add(11*time.Minute), jobs...)
	args := []string{"reclaim", "--config", cfgFile, "-i", now, "--ledger", db.dsn, "--gpu-price", "H100=2.49", "--execute"}
	noticed := func() int { b, _ := os.ReadFile(notices); return strings.Count(string(b), `"text":`) }

	outs := replicas(t, env, args, func() {
		c.WaitFor(t, func() bool { return noticed() > 0 }, "the first replica delivering a notice")
	})
	if noticed() != 2 || strings.Count(outs, ": notified") != 2 {
		t.Fatalf("two replicas at once: %d notices\n%s", noticed(), outs)
	}
	db.cut(true)
	if r := runAt(t, time.Now(), args...); r.code != 1 || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 || !strings.Contains(r.errOut, "ledger") {
		t.Fatalf("the database unreachable: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	db.cut(false)

	wrap := slowScontrol(t, dir)
	killed := exec.Command(binary, args...)
	killed.Env = withPath(env, wrap+":"+os.Getenv("PATH"))
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(wrap, "held")
	c.WaitFor(t, func() bool { _, err := os.Stat(held); return err == nil }, "the action under way")
	b, _ := os.ReadFile(held)
	claimed, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	_ = killed.Process.Kill()
	_ = killed.Wait()
	// The scontrol it started runs on and requeues the job after all.
	c.WaitFor(t, func() bool { return c.Job(t, claimed, "JobState") == "PENDING" }, "job "+claimed+" requeued by the stopped pass's command")
	other := jobs[0]
	if other == claimed {
		other = jobs[1]
	}
	outs = replicas(t, env, args, nil)
	if strings.Count(outs, other+": acted (requeued held") != 1 || !strings.Contains(outs, claimed+": wait (another pass is acting on it since") {
		t.Fatalf("two replicas after the kill (%s claimed):\n%s", claimed, outs)
	}
	if r := runAt(t, t0.Add(11*time.Minute+30*time.Second), append(args[:4:4], append([]string{later}, args[5:]...)...)...); r.code != 0 ||
		!strings.Contains(r.out, claimed+": acted (requeued held (owner root(0)), found so after a stopped pass") || strings.Contains(r.out, other+": acted (") {
		t.Fatalf("the pass after the claim went stale: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	for _, id := range jobs {
		c.WaitFor(t, func() bool { return c.Job(t, id, "JobState") == "PENDING" }, "job "+id+" requeued held")
		if n := c.Job(t, id, "Restarts"); n != "1" {
			t.Errorf("job %s requeued %s times", id, n)
		}
	}
	if noticed() != 2 {
		t.Errorf("%d notices in all, want 2", noticed())
	}
}

// replicas runs two reclaim processes, the second once between returns
// (at once when nil), and returns their outputs.
func replicas(t *testing.T, env, args []string, between func()) string {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]bytes.Buffer, 2)
	for i := range out {
		if i > 0 && between != nil {
			between()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(binary, args...)
			cmd.Env, cmd.Stdout, cmd.Stderr = env, &out[i], &out[i]
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(&out[i], "exit: %v\n", err)
			}
		}()
	}
	wg.Wait()
	s := out[0].String() + out[1].String()
	if strings.Contains(s, "exit: ") {
		t.Fatalf("a replica failed:\n%s", s)
	}
	return s
}

// slowScontrol is a directory whose scontrol runs the real one, but for
// requeuehold first writes "JOBID PID" to held and sleeps 2 s: the action
// is under way and not yet made.
func slowScontrol(t *testing.T, dir string) string {
	scontrol, err := exec.LookPath("scontrol")
	if err != nil {
		t.Fatal(err)
	}
	wrap := filepath.Join(dir, "wrap")
	if err := os.MkdirAll(wrap, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = requeuehold ]; then echo \"$2 $$\" > %q; sleep 2; fi\nexec %q \"$@\"\n", filepath.Join(wrap, "held"), scontrol)
	if err := os.WriteFile(filepath.Join(wrap, "scontrol"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrap
}

// withPath is env with PATH replaced by path.
func withPath(env []string, path string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "PATH="+path)
}

// tcpCut is a TCP proxy to a database that a test can cut: while cut, it
// closes every connection it carries and refuses new ones.
type tcpCut struct {
	dsn   string
	mu    sync.Mutex
	off   bool
	conns []net.Conn
}

// newTCPCut proxies hostPortDB ("127.0.0.1:PORT/seedance?…", the DSN after
// its user) and gives the DSN through the proxy.
func newTCPCut(t *testing.T, hostPortDB string) *tcpCut {
	target, rest, _ := strings.Cut(hostPortDB, "/")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &tcpCut{dsn: "postgres://seedance@" + ln.Addr().String() + "/" + rest}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			off := p.off
			if !off {
				p.conns = append(p.conns, in)
			}
			p.mu.Unlock()
			if off {
				in.Close()
				continue
			}
			go p.carry(in, target)
		}
	}()
	return p
}

func (p *tcpCut) carry(in net.Conn, target string) {
	out, err := net.Dial("tcp", target)
	if err != nil {
		in.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, out)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(out, in); out.Close() }()
	_, _ = io.Copy(in, out)
	in.Close()
}

// cut cuts the database off (closing what is open) or lets it through.
func (p *tcpCut) cut(off bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off = off
	if off {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}
