package worker

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
)

// maxRequestBytes bounds a request body (a payload file travels in
// initialize, so it is generous).
const maxRequestBytes = 64 << 20

// Handler serves the worker API of protocol over w.
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	// Prometheus scrapes /metrics without credentials (internal/metrics).
	mux.Handle("GET /metrics", w.metrics.Handler())
	post := func(path string, h func(r *http.Request) (any, error)) {
		mux.HandleFunc("POST "+path, func(rw http.ResponseWriter, r *http.Request) {
			defer w.calls.begin()()
			r.Body = http.MaxBytesReader(rw, r.Body, maxRequestBytes)
			reply(rw, h)(r)
		})
	}
	get := func(path string, h func(r *http.Request) (any, error)) {
		mux.HandleFunc("GET "+path, func(rw http.ResponseWriter, r *http.Request) {
			// A kubelet's health probe is not the coordinator.
			if path != protocol.PathHealth {
				defer w.calls.begin()()
			}
			reply(rw, h)(r)
		})
	}
	post(protocol.PathInitialize, func(r *http.Request) (any, error) {
		var req protocol.InitializeRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		if err := w.Initialize(r.Context(), req); err != nil {
			return nil, err
		}
		return protocol.InitializeResponse{Security: w.SecurityInfo()}, nil
	})
	post(protocol.PathCreateTopics, func(r *http.Request) (any, error) {
		var req protocol.CreateTopicsRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return w.CreateTopics(r.Context(), req)
	})
	post(protocol.PathCreateProducers, func(r *http.Request) (any, error) {
		var req protocol.CreateProducersRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return protocol.Empty{}, w.CreateProducers(r.Context(), req)
	})
	post(protocol.PathCreateConsumers, func(r *http.Request) (any, error) {
		var req protocol.CreateConsumersRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return protocol.Empty{}, w.CreateConsumers(r.Context(), req)
	})
	post(protocol.PathClockOffsets, func(r *http.Request) (any, error) {
		var req protocol.ClockOffsetsRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return protocol.Empty{}, w.SetClockOffsets(req)
	})
	post(protocol.PathProbe, func(r *http.Request) (any, error) { return w.Probe(r.Context()) })
	post(protocol.PathStartLoad, func(r *http.Request) (any, error) {
		var req protocol.StartLoadRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return protocol.Empty{}, w.StartLoad(req)
	})
	post(protocol.PathAdjustRate, func(r *http.Request) (any, error) {
		var req protocol.AdjustRateRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return protocol.Empty{}, w.AdjustRate(req)
	})
	post(protocol.PathPhase, func(r *http.Request) (any, error) {
		var req protocol.PhaseRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return w.SetPhase(req)
	})
	for path, pause := range map[string]bool{protocol.PathPauseConsumers: true, protocol.PathResumeConsumers: false} {
		post(path, func(r *http.Request) (any, error) {
			var req protocol.PauseRequest
			if err := decode(r, &req); err != nil {
				return nil, err
			}
			return protocol.Empty{}, w.Pause(req, pause)
		})
	}
	post(protocol.PathStopLoad, func(r *http.Request) (any, error) { return protocol.Empty{}, w.StopLoad(r.Context()) })
	get(protocol.PathStats, func(r *http.Request) (any, error) {
		after, err := queryUint(r, "after")
		if err != nil {
			return nil, err
		}
		return w.Stats(after, r.URL.Query().Get("cut") == "true")
	})
	get(protocol.PathCounters, func(r *http.Request) (any, error) { return w.Counters() })
	get(protocol.PathReceived, func(r *http.Request) (any, error) { return w.Received() })
	post(protocol.PathStop, func(r *http.Request) (any, error) {
		keep := r.URL.Query().Get("keepDriver") == "true"
		return protocol.Empty{}, w.Stop(r.Context(), keep)
	})
	post(protocol.PathDeleteTopics, func(r *http.Request) (any, error) { return protocol.Empty{}, w.DeleteTopics(r.Context()) })
	post(protocol.PathShutdown, func(*http.Request) (any, error) {
		w.RequestShutdown()
		return protocol.Empty{}, nil
	})
	get(protocol.PathTime, func(*http.Request) (any, error) {
		return protocol.TimeResponse{UnixMicros: time.Now().UnixMicro()}, nil
	})
	get(protocol.PathHealth, func(*http.Request) (any, error) { return protocol.Empty{}, nil })
	return requireToken(w.opts.Token, mux)
}

// requireToken lets through only requests that carry the run's token, so
// a pod that can reach the worker (the pod network is flat) cannot drive
// it. The health check stays open (probes), and so does GET /metrics, which
// a Prometheus scrapes without the token.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		open := r.Method == http.MethodGet && (r.URL.Path == protocol.PathHealth || r.URL.Path == "/metrics")
		if !open && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(rw).Encode(protocol.Error{Error: "this worker takes commands only from its run's coordinator: the request lacks the run's token (Authorization: Bearer, from the run's Secret)"})
			return
		}
		next.ServeHTTP(rw, r)
	})
}

func reply(rw http.ResponseWriter, h func(r *http.Request) (any, error)) func(r *http.Request) {
	return func(r *http.Request) {
		v, err := h(r)
		rw.Header().Set("Content-Type", "application/json")
		if err != nil {
			code := http.StatusInternalServerError
			var bad badRequest
			if errors.As(err, &bad) {
				code = http.StatusBadRequest
			} else if errors.Is(err, errNotInitialized) {
				code = http.StatusConflict
			}
			rw.WriteHeader(code)
			_ = json.NewEncoder(rw).Encode(protocol.Error{Error: err.Error()})
			return
		}
		_ = json.NewEncoder(rw).Encode(v)
	}
}

type badRequest struct{ error }

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest{fmt.Errorf("%s: request body: %w", r.URL.Path, err)}
	}
	return nil
}

func queryUint(r *http.Request, name string) (uint64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, badRequest{fmt.Errorf("query parameter %s=%q: want a non-negative integer", name, s)}
	}
	return v, nil
}

// Serve runs the worker's HTTP server on addr until ctx ends or the
// coordinator asks it to shut down, then closes the worker's clients.
func Serve(ctx context.Context, addr string, w *Worker) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("worker listen on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, w)
}

// ServeListener is Serve on an open listener (tests and local mode pick a
// free loopback port this way).
func ServeListener(ctx context.Context, ln net.Listener, w *Worker) error {
	return serve(ctx, ln, w, Drain{})
}

// DefaultDrainIdle is how long a draining worker pod waits for a call from
// its coordinator: during a run the coordinator reads the stats every
// snapshot interval (10 s), and once stopped it starts its cleanup at
// once, so three intervals of silence mean it is gone.
const DefaultDrainIdle = 30 * time.Second

// Drain is what a worker does when its context ends. Idle zero stops it
// at once (local mode, tests); a worker pod drains instead (ServeDraining).
type Drain struct {
	// Idle is how long the coordinator may make no call before the
	// draining worker stops.
	Idle time.Duration
	// Logf, when set, says when draining starts and why it ended.
	Logf func(format string, args ...any)
}

// ServeDraining is Serve for a worker pod. When ctx ends (SIGTERM: the pod
// or its run was deleted, or the pod evicted) the worker goes on answering
// its coordinator, which at that moment reads the last stats, stops the
// load and deletes the run's topics through the workers. A worker that
// left at once left those topics on the brokers, and the coordinator's
// calls to its vanished address ran into their timeouts: on the local
// cluster a run deleted mid-run kept its coordinator pod, and so the run,
// for 2 min 6 s, and its topics stayed. The worker stops when the
// coordinator asks it to shut down or has made no call for d.Idle (the
// coordinator is gone too), whichever comes first; the pod's termination
// grace period bounds it all.
func ServeDraining(ctx context.Context, addr string, w *Worker, d Drain) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("worker listen on %s: %w", addr, err)
	}
	return serve(ctx, ln, w, d)
}

func serve(ctx context.Context, ln net.Listener, w *Worker, d Drain) error {
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		if d.Idle > 0 {
			d.logf("stop signal: answering the coordinator until it asks to shut down or makes no call for %s", d.Idle)
			d.logf("draining ended: %s", w.drain(d.Idle))
		}
	case <-w.shutdown:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = w.Close(sctx)
	return nil
}

func (d Drain) logf(format string, args ...any) {
	if d.Logf != nil {
		d.Logf(format, args...)
	}
}

// drain waits for the coordinator's shutdown call, or until it has been
// quiet for idle (counted from now, never during a call), and says which.
func (w *Worker) drain(idle time.Duration) string {
	w.calls.touch()
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-w.shutdown:
			return "the coordinator asked to shut down"
		case <-tick.C:
			if q := w.calls.quietFor(); q >= idle {
				return fmt.Sprintf("no call from the coordinator for %s", q.Round(time.Millisecond))
			}
		}
	}
}

// callTracker knows whether a coordinator call is under way and when the
// last one ended.
type callTracker struct {
	inFlight atomic.Int64
	lastEnd  atomic.Int64 // UnixNano
}

// begin records a call's start and returns what records its end.
func (c *callTracker) begin() func() {
	c.inFlight.Add(1)
	return func() {
		c.touch()
		c.inFlight.Add(-1)
	}
}

func (c *callTracker) touch() { c.lastEnd.Store(time.Now().UnixNano()) }

// quietFor is how long no call has been under way.
func (c *callTracker) quietFor() time.Duration {
	if c.inFlight.Load() > 0 {
		return 0
	}
	return time.Since(time.Unix(0, c.lastEnd.Load()))
}
