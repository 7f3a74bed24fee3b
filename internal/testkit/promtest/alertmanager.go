package promtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/internal/testkit/testnet"
)

// StartAlertmanager serves Debian's prometheus-alertmanager on a free port
// of 127.0.0.1, alone (no cluster gossip), with one route to a receiver
// that sends nowhere: what reclaim posts is read back through the API.
func StartAlertmanager(t testing.TB) *Server {
	t.Helper()
	bin := binary(t, "prometheus-alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	conf := "route: {receiver: owners, group_by: [namespace], group_wait: 1s}\nreceivers: [{name: owners}]\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testnet.FreePort(t)
	return serve(t, "alertmanager", "/-/ready", port, exec.Command(bin, "--config.file="+cfg, "--storage.path="+dir,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address=", "--log.level=warn"))
}
