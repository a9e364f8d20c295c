package coordinator

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A call that creates something is not retried once the worker got it,
// but is when the connection was never made: a worker that starts
// listening a second after the first attempt still gets the call, once.
func TestClientRetriesOnlyWhatWasNotSent(t *testing.T) {
	t.Run("refused, then listening: the call arrives once", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // refused until the server below listens there
		var calls atomic.Int32
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			_, _ = w.Write([]byte("{}"))
		})}
		go func() {
			time.Sleep(700 * time.Millisecond)
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			_ = srv.Serve(l)
		}()
		defer srv.Close()
		// 8 retries wait 18 s in all: the listener's start may be late on
		// a busy machine and still in time.
		c := newClient(addr, 5*time.Second, 8, "")
		if err := c.post(context.Background(), "/v1/phase", nil, nil, callOpt{}); err != nil {
			t.Fatalf("the call failed though the worker listened within its retries: %v", err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the worker got %d calls, want 1", n)
		}
	})
	t.Run("sent and answered 502: not retried", func(t *testing.T) {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		}))
		defer srv.Close()
		c := newClient(srv.URL, 5*time.Second, 3, "")
		if err := c.post(context.Background(), "/v1/phase", nil, nil, callOpt{}); err == nil {
			t.Fatal("a 502 answer was taken as success")
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the worker got %d calls of a call that creates something, want 1", n)
		}
		calls.Store(0)
		if err := c.get(context.Background(), "/v1/phase", nil, callOpt{}); err == nil {
			t.Fatal("a 502 answer was taken as success")
		}
		if n := calls.Load(); n != 4 {
			t.Errorf("an idempotent call was made %d times, want 1 and 3 retries", n)
		}
	})
	t.Run("never listening: fails after its retries, naming the dial", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c := newClient(addr, 5*time.Second, 2, "")
		err = c.post(context.Background(), "/v1/phase", nil, nil, callOpt{})
		if err == nil || !notSent(err) {
			t.Fatalf("got %v, want the dial's error", err)
		}
	})
}
