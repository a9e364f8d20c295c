package localbrokers

import (
	"fmt"
	"net"
	"strconv"
)

// consecutiveFreePorts finds n consecutive loopback ports that are free now
// and records them as handed out, as FreePort (process.go) does. The Pulsar
// standalone needs such a block: its bookies count up from one base port.
// FreePort lets the kernel choose the base; its neighbours are checked here.
func consecutiveFreePorts(n int) ([]int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		base, err := FreePort()
		if err != nil {
			return nil, err
		}
		if base+n-1 > 65535 {
			continue
		}
		freeMu.Lock()
		ports := []int{base}
		for i := 1; i < n; i++ {
			if handedOut[base+i] || !portFree(base+i) {
				break
			}
			ports = append(ports, base+i)
		}
		if len(ports) == n {
			for _, p := range ports {
				handedOut[p] = true
			}
			freeMu.Unlock()
			return ports, nil
		}
		freeMu.Unlock()
	}
	return nil, fmt.Errorf("localbrokers: no block of %d consecutive free loopback ports found", n)
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
