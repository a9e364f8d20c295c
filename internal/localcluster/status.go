package localcluster

import (
	"fmt"
	"io"
	"strings"
)

// Status prints each part and whether it runs, then each node's state; it
// fails when a part is not running.
func (c *Cluster) Status(w io.Writer) error {
	down := 0
	for _, p := range c.Parts() {
		if c.Alive(p) {
			fmt.Fprintf(w, "%-40s running (pid %d)\n", p, c.pid(p))
		} else {
			fmt.Fprintf(w, "%-40s not running\n", p)
			down++
		}
	}
	if down > 0 {
		return fmt.Errorf("%d part(s) not running", down)
	}
	for _, n := range c.Nodes {
		st, err := c.kubectl("get", "node", string(n.Name), "--no-headers")
		if f := strings.Fields(st); err == nil && len(f) > 1 {
			st = f[1]
		}
		fmt.Fprintf(w, "%-40s %s (%s, bridge %s)\n", "node "+string(n.Name), strings.TrimSpace(st), n.IP, n.Bridge)
	}
	fmt.Fprintf(w, "%-40s %s\n", "kubeconfig", c.Kubeconfig())
	return nil
}
