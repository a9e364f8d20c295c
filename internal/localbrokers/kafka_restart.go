package localbrokers

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// restartExitWait bounds the wait for a killed node's JVM to be gone
// before it starts again: SIGKILL ends it at once, and its port and data
// directory's lock must be free.
const restartExitWait = 10 * time.Second

// Restart starts node id (1..n, or a separate controller's id) again as it
// was started, on its own data directory and port, as the kubelet restarts
// a killed container: after its process has exited, and back once its port
// answers and every broker is registered with the controller again. The
// node's Process is the new one from then on. It appends to the node's
// log; the new JVM's GC log replaces the old one's (gc.log), so the
// results' GC figures are of the restarted JVM.
//
// Not safe beside Stop or another Restart of the same node: local mode's
// fault injector restarts a node once per kill and waits for it before the
// run stops its brokers.
func (k *Kafka) Restart(ctx context.Context, id int, timeout time.Duration) (*Process, error) {
	n := k.node(id)
	old := k.NodeProcess(id)
	if n == nil || old == nil {
		return nil, fmt.Errorf("localbrokers: kafka has no node %d to restart", id)
	}
	select {
	case <-old.done:
	case <-time.After(restartExitWait):
		return nil, fmt.Errorf("localbrokers: %s (pid %d) is still running %s after it was to have died; not restarting it", old.Name, old.Pid, restartExitWait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var p *Process
	var err error
	if n.detached {
		p, err = StartJVMDetached(n.jvm)
	} else {
		p, err = StartJVM(n.jvm)
	}
	if err != nil {
		return nil, fmt.Errorf("localbrokers: restarting %s: %w", old.Name, err)
	}
	k.procMu.Lock()
	n.Process = p
	k.procMu.Unlock()
	deadline := time.Now().Add(timeout)
	if err := p.WaitPort(ctx, k.hostname()+":"+strconv.Itoa(n.Port), time.Until(deadline)); err != nil {
		return p, err
	}
	if n != k.Controller {
		if err := k.waitRegistered(ctx, time.Until(deadline)); err != nil {
			return p, err
		}
	}
	return p, nil
}

// NodeProcess is node id's process now (a restarted node's new one); nil
// when there is no such node.
func (k *Kafka) NodeProcess(id int) *Process {
	k.procMu.Lock()
	defer k.procMu.Unlock()
	if n := k.node(id); n != nil {
		return n.Process
	}
	return nil
}

// node is the node of id, the brokers' or a separate controller's; nil
// when there is none.
func (k *Kafka) node(id int) *KafkaNode {
	for i := range k.Nodes {
		if k.Nodes[i].ID == id {
			return &k.Nodes[i]
		}
	}
	if k.Controller != nil && k.Controller.ID == id {
		return k.Controller
	}
	return nil
}
