package monitoringtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
)

// TestWidenedWindow asks a real Prometheus for a broker's CPU over a
// window shorter than its scrape interval, which holds at most one sample,
// so the rate has none: the figure is read over the window widened on
// each side, and a note says so. A pod whose scrapes fail gets an error
// that names the target and its scrape error. The target is a process
// counter served from this test (it grows by one CPU-second a second),
// not a broker: what is checked is how Prometheus is asked.
func TestWidenedWindow(t *testing.T) {
	t.Parallel()
	born := time.Now()
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.3f\n", time.Since(born).Seconds())
	}))
	defer counter.Close()
	// A port nothing listens on: that target's scrapes fail.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	prom := startPrometheus(t, []target{
		{job: "sparse", addr: strings.TrimPrefix(counter.URL, "http://"), pod: "sparse-0"},
		{job: "sparse", addr: gone, pod: "gone-0"},
	})

	// Four samples 6 s apart: the window 7 s before now, widened by 6 s,
	// holds at least two of them.
	deadline := time.Now().Add(2 * time.Minute)
	for prom.value(t, `count_over_time(process_cpu_seconds_total{pod="sparse-0"}[1h])`, time.Now()) < 4 {
		if time.Now().After(deadline) {
			prom.logTargets(t)
			t.Fatal("fewer than four scrapes of the counter in two minutes")
		}
		time.Sleep(500 * time.Millisecond)
	}
	end := time.Now().Add(-7 * time.Second)
	start := end.Add(-3 * time.Second)
	ctx := context.Background()
	target := brokerres.PromTarget{URL: prom.url, Namespace: "local", Pods: "sparse-[0-9]+", System: v1alpha1.SystemKafka, Widen: 6 * time.Second}
	rep, err := brokerres.QueryPrometheus(ctx, target, start, end)
	if err != nil {
		prom.logTargets(t)
		t.Fatal(err)
	}
	if len(rep.Brokers) != 1 || rep.Brokers[0].CPUCores == nil {
		t.Fatalf("brokers %+v (notes %q)", rep.Brokers, rep.Notes)
	}
	if cpu := *rep.Brokers[0].CPUCores; cpu < 0.5 || cpu > 1.5 {
		t.Errorf("CPU over the widened window %.3f cores, want about 1 (the counter grows a second a second)", cpu)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "CPU: Prometheus had fewer than two samples inside the measured window") {
		t.Errorf("no note of the widened window: %q", rep.Notes)
	}

	target.Pods = "gone-[0-9]+"
	_, err = brokerres.QueryPrometheus(ctx, target, start, end)
	if err == nil || !strings.Contains(err.Error(), "gone-0 (http://"+gone+"/metrics) is down") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a pod whose scrapes fail: %v", err)
	}
}
