package localbrokers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBookieConfig(t *testing.T) {
	merged := map[string]string{"journalSyncData": "true", "bookiePort": "1", "httpServerEnabled": "true"}
	tests := []struct {
		name     string
		index    int
		httpPort int
		want     map[string]string
	}{
		{"first, with HTTP", 0, 9000, map[string]string{
			"bookiePort": "4000", "journalDirectory": "/d/bookie-0/journal", "ledgerDirectories": "/d/bookie-0/ledgers",
			"metadataServiceUri": "zk+null://127.0.0.1:2181/ledgers", "httpServerEnabled": "true", "httpServerPort": "9000",
			"journalSyncData": "true",
		}},
		// Only the first bookie serves HTTP: two would ask for one port.
		{"second, no HTTP", 1, 9000, map[string]string{
			"bookiePort": "4000", "journalDirectory": "/d/bookie-1/journal", "httpServerEnabled": "false",
		}},
		{"first, HTTP not asked", 0, 0, map[string]string{"httpServerEnabled": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := bookieConfig(merged, tt.index, 4000, 2181, "/d", tt.httpPort)
			for k, v := range tt.want {
				if c[k] != v {
					t.Errorf("%s = %q; want %q", k, c[k], v)
				}
			}
			if tt.httpPort == 0 || tt.index > 0 {
				if _, ok := c["httpServerPort"]; ok {
					t.Errorf("httpServerPort set for a bookie without HTTP: %q", c["httpServerPort"])
				}
			}
		})
	}
	if merged["bookiePort"] != "1" {
		t.Errorf("bookieConfig changed the merged settings it was given")
	}
}

// A standalone with separate bookies (a real one: ZooKeeper and the
// broker in one JVM, three bookie JVMs) is ready, writes, and a SIGKILLed
// bookie comes back with RestartBookie, after which writes need all three
// again and succeed.
func TestPulsarSeparateBookiesRestart(t *testing.T) {
	if err := CheckJava(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := StartPulsar(ctx, PulsarOptions{Bookies: 3, BookieProcesses: true, JVM: PulsarTestJVM, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	if n := p.SeparateBookies(); n != 3 {
		t.Fatalf("SeparateBookies = %d; want 3", n)
	}
	if pids := p.Pids(); len(pids) != 4 {
		t.Fatalf("Pids = %v; want the standalone and three bookies", pids)
	}
	old := p.BookieProcess(1)
	if err := syscall.Kill(old.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	np, err := p.RestartBookie(ctx, 1, 2*time.Minute)
	if err != nil {
		t.Fatalf("RestartBookie: %v", err)
	}
	t.Logf("bookie-1 listening again %.1f s after its SIGKILL (pid %d -> %d)", time.Since(start).Seconds(), old.Pid, np.Pid)
	if np.Pid == old.Pid || p.BookieProcess(1) != np {
		t.Fatalf("BookieProcess(1) is not the restarted process")
	}
	if !slices.Contains(p.Pids(), np.Pid) {
		t.Errorf("Pids %v lack the restarted bookie's %d", p.Pids(), np.Pid)
	}
	// A new topic's ledger needs an ensemble of 3 of the 3 bookies: it is
	// created only once the restarted bookie has registered again.
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body, err := p.adminDo(ctx, c, http.MethodPut, p.AdminURL()+"/admin/v2/persistent/public/default/after-restart")
		if err == nil && (code == http.StatusNoContent || code == http.StatusOK) {
			t.Logf("a 3-bookie ledger was created %.1f s after the SIGKILL", time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no topic could be created after the restart: %d %s %v; bookie-1 log:\n%s", code, body, err, np.LogTail(3000))
		}
		time.Sleep(time.Second)
	}
	e, err := p.CurrentEnsemble(ctx, "public/default/after-restart")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values([]string{p.BookieID(0), p.BookieID(1), p.BookieID(2)}))
	got := slices.Sorted(slices.Values(e.Bookies))
	if !slices.Equal(got, want) {
		t.Errorf("the new topic's ensemble is %v; want all three bookies %v", e.Bookies, want)
	}
}

func TestParseEnsemble(t *testing.T) {
	stats := func(meta string) []byte {
		b, _ := json.Marshal(map[string]any{"ledgers": []map[string]any{
			{"ledgerId": 7, "metadata": "old"},
			{"ledgerId": 9, "metadata": meta},
		}})
		return b
	}
	tests := []struct {
		name, meta string
		want       []string
		err        string
	}{
		{"one ensemble", "LedgerMetadata{formatVersion=3, ensembleSize=3, ensembles={0=[127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3]}, customMetadata={}}",
			[]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, ""},
		// After an ensemble change the last ensemble is the one written to.
		{"changed", "LedgerMetadata{ensembles={0=[a:1, b:2, c:3], 812=[a:1, b:2, d:4]}, customMetadata={x=[y]}}",
			[]string{"a:1", "b:2", "d:4"}, ""},
		{"no ensembles", "LedgerMetadata{state=OPEN}", nil, "no ensembles in the ledger's metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parseEnsemble("t/n/x", stats(tt.meta))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseEnsemble = %v, %v; want an error containing %q", e, err, tt.err)
				}
				return
			}
			if err != nil || e.Ledger != 9 || !slices.Equal(e.Bookies, tt.want) {
				t.Fatalf("parseEnsemble = %+v, %v; want ledger 9 on %v", e, err, tt.want)
			}
		})
	}
	if _, err := parseEnsemble("t/n/x", []byte(`{"ledgers":[]}`)); err == nil || !strings.Contains(err.Error(), "no ledger yet") {
		t.Errorf("no ledgers: %v", err)
	}
}
