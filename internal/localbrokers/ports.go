package localbrokers

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// FreePort returns a loopback TCP port that was free a moment ago, drawn at
// random below Linux's default ephemeral range (32768-60999): a port from
// that range (what listening on :0 gives) can be taken as the local port of
// any outgoing connection before the JVM binds it. A port handed out earlier
// by this process is never returned again, and none that another process
// holds (reserve): test packages and the e2e suite's parallel processes run
// on one host at once, and a free port checked by two of them at the same
// moment would be given to both.
func FreePort() (int, error) {
	freeMu.Lock()
	defer freeMu.Unlock()
	for i := 0; i < 200; i++ {
		port := portLow + mrand.IntN(portHigh-portLow)
		if reserve(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port found in [%d, %d) after 200 tries", portLow, portHigh)
}

const portLow, portHigh = 20000, 32768

// FreePorts returns n distinct free loopback ports.
func FreePorts(n int) ([]int, error) {
	ps := make([]int, n)
	for i := range ps {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

var (
	freeMu    sync.Mutex
	handedOut = map[int]bool{}
	// held keeps the lock files of the ports this process reserved open:
	// their locks last as long as the process, and go with it however it
	// ends (the kernel drops a dead process's flocks).
	held []*os.File
)

// portLockDir holds one lock file per port a process on this host has
// reserved. Every user of the host must agree on it, so it is not
// TMPDIR-relative: the e2e suite's processes and the test packages may
// run with different temporary directories.
var portLockDir = filepath.Join("/tmp", "streambench-ports")

// reserve claims port for this process, with freeMu held: not handed out
// here before, not locked by another process (an exclusive flock on
// portLockDir/<port>, kept), and free to listen on now. A port that fails
// the last check loses its lock again.
func reserve(port int) bool {
	if handedOut[port] {
		return false
	}
	f, ok := lockPort(port)
	if !ok {
		return false
	}
	if !portFree(port) {
		_ = f.Close()
		return false
	}
	handedOut[port] = true
	if f != nil {
		held = append(held, f)
	}
	return true
}

// lockPort takes the port's lock file without waiting; false when another
// process holds it. Where the directory cannot be made (a read-only /tmp),
// ports are only checked by listening, as before: a nil file and true.
func lockPort(port int) (*os.File, bool) {
	if err := os.MkdirAll(portLockDir, 0o1777); err != nil {
		return nil, true
	}
	f, err := os.OpenFile(filepath.Join(portLockDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	return f, true
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
