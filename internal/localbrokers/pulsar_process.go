package localbrokers

import "fmt"

// consecutiveFreePorts finds n consecutive loopback ports that are free now
// and records them as handed out, as FreePort (ports.go) does. The Pulsar
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
			if !reserve(base + i) {
				break
			}
			ports = append(ports, base+i)
		}
		freeMu.Unlock()
		if len(ports) == n {
			return ports, nil
		}
		// The reserved ports of a broken block stay handed out: they are
		// free, just not next to each other.
	}
	return nil, fmt.Errorf("localbrokers: no block of %d consecutive free loopback ports found", n)
}
