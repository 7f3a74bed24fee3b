// Package browsertest drives Debian's headless Chromium for tests: it
// installs the package when it is missing and the tests run as root, loads
// pages with a fresh profile and no background networking, and routes every
// request through a recording proxy on 127.0.0.1, so a test can check that
// a page asked for nothing.
package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"github.com/seedance/seedance/internal/testkit/engine"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func chromium(t testing.TB) string {
	t.Helper()
	engine.SkipShort(t, "starts Chromium")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs it)")
	}
	t.Skip("needs a headless Chromium on PATH (Debian: apt-get install chromium; or run bash .ci/run)")
	return ""
}

// Browser runs Chromium against local files.
type Browser struct {
	bin   string
	proxy net.Listener
	mu    sync.Mutex
	lines []string // the first line of each proxied request
}

// RequestLines returns the first line of every request seen by the proxy
// ("CONNECT host:443 HTTP/1.1", "GET http://… HTTP/1.1").
func (b *Browser) RequestLines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// New starts the recording proxy and finds Chromium.
func New(t testing.TB) *Browser {
	t.Helper()
	b := &Browser{bin: chromium(t)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.proxy = l
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second)) // a failed deadline only risks a slower test
			line, _ := bufio.NewReader(c).ReadString('\n')
			b.mu.Lock()
			b.lines = append(b.lines, strings.TrimSpace(line))
			b.mu.Unlock()
			c.Close()
		}
	}()
	return b
}

// chromiumOwn matches the hosts Chromium itself calls even with background
// networking off (its clock check, account, update and component services),
// by any method.
var chromiumOwn = regexp.MustCompile(`^[A-Z]+ (http://)?([a-z0-9-]+\.)*(google\.com|googleapis\.com|gstatic\.com|gvt1\.com)[:/ ]`)

// PageRequests lists the requests that did not come from Chromium itself:
// the page's own.
func (b *Browser) PageRequests() []string {
	var out []string
	for _, l := range b.RequestLines() {
		// An empty line is a connection Chromium opened and closed unused
		// (a preconnect): no request was made on it.
		if l != "" && !chromiumOwn.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func (b *Browser) run(t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-default-apps", "--no-default-browser-check",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=http://" + b.proxy.Addr().String(), "--proxy-bypass-list=<-loopback>"}
	cmd := exec.CommandContext(ctx, b.bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// DumpDOM loads the file, runs its scripts, and returns the serialised DOM.
func (b *Browser) DumpDOM(t testing.TB, path string) string {
	t.Helper()
	abs, _ := filepath.Abs(path)
	return string(b.run(t, "--virtual-time-budget=3000", "--dump-dom", "file://"+abs))
}

// DumpDOMAt is DumpDOM in a window w × h pixels, which the page's layout
// (and so where its text lands) depends on.
func (b *Browser) DumpDOMAt(t testing.TB, path string, w, h int) string {
	t.Helper()
	abs, _ := filepath.Abs(path)
	return string(b.run(t, "--virtual-time-budget=3000", "--window-size="+itoa(w)+","+itoa(h), "--dump-dom", "file://"+abs))
}

// Screenshot renders the file at the given size and returns the PNG.
func (b *Browser) Screenshot(t testing.TB, path string, w, h int) []byte {
	t.Helper()
	abs, _ := filepath.Abs(path)
	out := filepath.Join(t.TempDir(), "shot.png")
	b.run(t, "--hide-scrollbars", "--window-size="+itoa(w)+","+itoa(h), "--screenshot="+out, "file://"+abs)
	png, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return png
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
