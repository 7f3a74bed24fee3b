package pipeline

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedance/seedance/reclaim/act"
)

// TestNoticeStaysOnOrigin (#56): a webhook or an Alertmanager that
// redirects to another port of the same host does not get the notice
// there, nor the basic auth its URL carries.
func TestNoticeStaysOnOrigin(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	withAuth := strings.Replace(srv.URL, "http://", "http://u:secret@", 1)
	cfg := configWith(t, "reclaim.webhook_url", withAuth+"/hook", "reclaim.alertmanager_url", withAuth)
	ns, err := ReclaimNotifiers(cfg)
	if err != nil || len(ns) != 2 {
		t.Fatalf("%d notifiers, %v", len(ns), err)
	}
	for _, n := range ns {
		err := n.Notify(context.Background(), act.Notice{Target: "ml/Job/x", Deadline: time.Now()}, time.Now())
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", n.Name(), err)
		}
	}
	if reached.Load() != 0 {
		t.Fatalf("the other port got %d requests", reached.Load())
	}
}
