package worker

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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

// With a run token, only requests that carry it drive the worker; the
// health check and /metrics stay open for probes and a Prometheus.
func TestRunToken(t *testing.T) {
	w := New(Options{Name: "w0", Token: "s3cret"})
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	do := func(method, path, auth string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		method, path, auth string
		want               int
	}{
		{http.MethodGet, protocol.PathTime, "", http.StatusUnauthorized},
		{http.MethodPost, protocol.PathStopLoad, "", http.StatusUnauthorized},
		{http.MethodPost, protocol.PathShutdown, "Bearer wrong", http.StatusUnauthorized},
		{http.MethodGet, protocol.PathCounters, "s3cret", http.StatusUnauthorized},
		{http.MethodGet, protocol.PathTime, "Bearer s3cret", http.StatusOK},
		{http.MethodGet, protocol.PathHealth, "", http.StatusOK},
	} {
		if got := do(tc.method, tc.path, tc.auth); got != tc.want {
			t.Errorf("%s %s with %q: %d, want %d", tc.method, tc.path, tc.auth, got, tc.want)
		}
	}
	// Without a token (local mode, loopback) nothing is asked for.
	open := httptest.NewServer(New(Options{Name: "w1"}).Handler())
	defer open.Close()
	resp, err := http.Get(open.URL + protocol.PathTime)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("no token configured: %s", resp.Status)
	}
}
