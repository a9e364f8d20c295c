package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/internal/protocol"
)

// client calls one worker. Every call has a timeout; idempotent calls are
// retried a bounded number of times on transport errors and 5xx answers,
// calls that create something are not (a retry could create it twice),
// unless the connection was never made: a dial that failed sent nothing,
// so any call is retried then. The e2e suite lost a run to one phase call
// whose dial to a worker that ran throughout timed out after 30 s ("dial
// tcp 10.244.2.44:8080: i/o timeout"; why that pod's address went
// unanswered is not established): each dial is now bounded at 10 s and
// tried again, so a worker out of reach for a while costs a late call,
// not the run.
type client struct {
	base    string
	http    *http.Client
	timeout time.Duration
	retries int
	token   string
}

// dialTimeout bounds each connection attempt, well under a call's
// timeout, so an unreachable worker is tried again within the call's
// retries rather than once for the whole call.
const dialTimeout = 10 * time.Second

func newClient(base string, timeout time.Duration, retries int, token string) *client {
	base = strings.TrimRight(base, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	return &client{base: base, http: &http.Client{Transport: tr}, timeout: timeout, retries: retries, token: token}
}

type callOpt struct {
	idempotent bool
	timeout    time.Duration
	query      string
}

// call does method path with body in (nil for none) and decodes the answer
// into out (nil to ignore).
func (c *client) call(ctx context.Context, method, path string, in, out any, o callOpt) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	timeout := c.timeout
	if o.timeout > 0 {
		timeout = o.timeout
	}
	attempts := 1 + c.retries
	url := c.base + path
	if o.query != "" {
		url += "?" + o.query
	}
	var last error
	for a := 0; a < attempts; a++ {
		if a > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("worker %s %s: %w (last error: %v)", c.base, path, ctx.Err(), last)
			case <-time.After(time.Duration(a) * 500 * time.Millisecond):
			}
		}
		retry, err := c.once(ctx, method, url, body, out, timeout)
		if err == nil {
			return nil
		}
		last = err
		if !(retry && o.idempotent || notSent(err)) || ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("worker %s %s: %w", c.base, path, last)
}

func (c *client) once(ctx context.Context, method, url string, body []byte, out any, timeout time.Duration) (retry bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, url, rd)
	if err != nil {
		return false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return true, fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		return true, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return true, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e protocol.Error
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return resp.StatusCode >= 500 && resp.StatusCode != http.StatusInternalServerError, fmt.Errorf("%s: %s", resp.Status, msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return false, fmt.Errorf("decoding the answer: %w", err)
		}
	}
	return false, nil
}

// notSent is whether err is a connection that was never made (refused,
// unreachable, timed out while dialling): the worker got no request.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *client) post(ctx context.Context, path string, in, out any, o callOpt) error {
	if in == nil {
		in = protocol.Empty{}
	}
	return c.call(ctx, http.MethodPost, path, in, out, o)
}

func (c *client) get(ctx context.Context, path string, out any, o callOpt) error {
	o.idempotent = true
	return c.call(ctx, http.MethodGet, path, nil, out, o)
}

// clockOffset measures the worker's clock offset NTP-style over n round
// trips.
func (c *client) clockOffset(ctx context.Context, n int) (protocol.ClockOffset, error) {
	var samples []protocol.ClockSample
	var last error
	for i := 0; i < n; i++ {
		var t protocol.TimeResponse
		sent := time.Now()
		err := c.get(ctx, protocol.PathTime, &t, callOpt{timeout: 5 * time.Second})
		recv := time.Now()
		if err != nil {
			last = err
			continue
		}
		// Micros of the wall clock at the monotonic-clock instants: the
		// round trip is measured on the monotonic clock, immune to steps.
		samples = append(samples, protocol.ClockSample{
			SentMicros: sent.UnixMicro(), WorkerMicros: t.UnixMicros,
			ReceivedMicros: sent.UnixMicro() + recv.Sub(sent).Microseconds(),
		})
	}
	if len(samples) == 0 {
		return protocol.ClockOffset{}, fmt.Errorf("measuring the clock offset of worker %s: %w", c.base, last)
	}
	return protocol.EstimateOffset(samples)
}
