package worker

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// startDraining serves w on a loopback port with d; cancel sends the
// "signal". The channel gets serve's result.
func startDraining(t *testing.T, w *Worker, d Drain) (base string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done = make(chan error, 1)
	go func() { done <- serve(ctx, ln, w, d) }()
	return "http://" + ln.Addr().String(), cancel, done
}

func call(t *testing.T, method, url string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s after the stop signal: %v (a draining worker must still answer)", method, url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s answered %s", method, url, resp.Status)
	}
}

// logged collects a Drain's log lines.
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A worker pod that gets SIGTERM (its run deleted) must still answer the
// coordinator's cleanup (last stats, stop, topic deletion) and leave when
// the coordinator says so, not after its idle limit.
func TestDrainingWorkerServesTheCoordinatorUntilShutdown(t *testing.T) {
	var log logged
	w := New(Options{Name: "w0"})
	base, signal, done := startDraining(t, w, Drain{Idle: time.Hour, Logf: log.logf})
	signal()
	for i := 0; i < 3; i++ {
		time.Sleep(100 * time.Millisecond)
		call(t, http.MethodGet, base+protocol.PathTime)
	}
	select {
	case <-done:
		t.Fatal("the worker stopped at the signal, before the coordinator was done with it")
	default:
	}
	call(t, http.MethodPost, base+protocol.PathShutdown)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a draining worker did not stop at the coordinator's shutdown call")
	}
	if !strings.Contains(log.String(), "the coordinator asked to shut down") {
		t.Errorf("the log does not say why draining ended:\n%s", log.String())
	}
}

// When the coordinator is gone too, a draining worker leaves after its
// idle limit; the kubelet's health probes do not keep it.
func TestDrainingWorkerLeavesWhenTheCoordinatorIsQuiet(t *testing.T) {
	var log logged
	w := New(Options{Name: "w0"})
	idle := 500 * time.Millisecond
	base, signal, done := startDraining(t, w, Drain{Idle: idle, Logf: log.logf})
	// Taken before the signal: the worker's idle clock starts after it, so
	// a test goroutine that runs late cannot see the worker leave "early".
	start := time.Now()
	signal()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve returned %v", err)
			}
			if waited := time.Since(start); waited < idle {
				t.Errorf("stopped after %s, before the idle limit %s", waited, idle)
			}
			if !strings.Contains(log.String(), "no call from the coordinator for") {
				t.Errorf("the log does not say why draining ended:\n%s", log.String())
			}
			return
		case <-time.After(50 * time.Millisecond):
			if time.Since(start) > time.Minute {
				t.Fatal("a draining worker whose coordinator is quiet did not stop")
			}
			// Errors are fine once it has stopped; the select above sees that.
			if resp, err := http.Get(base + protocol.PathHealth); err == nil {
				resp.Body.Close()
			}
		}
	}
}

// A call under way counts as the coordinator being there, however long
// it takes (a probe, a topic deletion).
func TestCallTrackerQuietOnlyBetweenCalls(t *testing.T) {
	var c callTracker
	c.touch()
	end := c.begin()
	time.Sleep(20 * time.Millisecond)
	if q := c.quietFor(); q != 0 {
		t.Fatalf("quiet for %s during a call", q)
	}
	end()
	time.Sleep(20 * time.Millisecond)
	if q := c.quietFor(); q < 20*time.Millisecond {
		t.Fatalf("quiet for %s, 20 ms after the call ended", q)
	}
}
