package localbrokers

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A port whose lock file another process holds is never handed out, and
// is again once that process lets go. flock locks belong to an open file,
// so a second open in this process stands in for the other process
// (a real one would only add a fork to the same kernel check).
func TestReserveSkipsPortsLockedElsewhere(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	other := port + 1
	for !portFree(other) || handedOut[other] {
		other++
	}
	f, err := os.OpenFile(filepath.Join(portLockDir, strconv.Itoa(other)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("port %d is locked by a process of this host already: %v", other, err)
	}
	freeMu.Lock()
	got := reserve(other)
	freeMu.Unlock()
	if got {
		t.Fatalf("port %d was reserved while another open file held its lock", other)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	freeMu.Lock()
	got = reserve(other)
	freeMu.Unlock()
	if !got {
		t.Fatalf("port %d was not reserved once its lock was released", other)
	}
	// This process holds it now: another open cannot lock it.
	g, err := os.OpenFile(filepath.Join(portLockDir, strconv.Itoa(other)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Fatalf("port %d's lock is not held after reserve", other)
	}
}

// A second fetch into the same directory waits for the first's lock
// (FetchJars checks the marker again under it), and gives up with ctx.
func TestLockDirWaitsForTheHolder(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := lockDir(ctx, dir); err == nil {
		t.Fatal("a second lock was taken while the first was held")
	}
	acquired := make(chan error, 1)
	go func() {
		u, err := lockDir(context.Background(), dir)
		if err == nil {
			u()
		}
		acquired <- err
	}()
	select {
	case err := <-acquired:
		t.Fatalf("the waiting lock returned (%v) before the holder released it", err)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
}
