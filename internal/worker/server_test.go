package worker

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
)

// A worker pod of a Job exits when the coordinator asks it to, so the Job
// completes instead of idling until teardown.
func TestServeReturnsOnShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := New(Options{Name: "w0"})
	done := make(chan error, 1)
	go func() { done <- ServeListener(context.Background(), ln, w) }()

	resp, err := http.Post("http://"+ln.Addr().String()+protocol.PathShutdown, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("shutdown answered %s", resp.Status)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after the shutdown request")
	}
	// A second request (a retried call) must not panic on a closed channel.
	w.RequestShutdown()
}
