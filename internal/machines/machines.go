// Package machines tells which of a run's nodes are one machine (issue
// 44): several kubelets on one host (the CI's local cluster) or kind's
// node containers each report the whole host, its CPUs, memory, disk and
// page cache, so per-node figures of such nodes are one machine's,
// measured once per node, and the results must say so.
//
// The kubelet reports two ids in status.nodeInfo. The boot id
// (/proc/sys/kernel/random/boot_id) is drawn anew at every boot and is
// the same for every process of one running kernel, containers included:
// nodes that share it share a machine. The machine id (/etc/machine-id)
// is the host's, but kind gives each node container its own, and a
// machine cloned from an image that kept the image's id shares it with
// its siblings: so it joins nodes only where no pair of boot ids says
// they run on different kernels.
package machines

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// idChars is how much of an id is recorded: enough to tell a run's
// machines apart; machine-id(5) asks that the machine id not be
// published whole, and results are published.
const idChars = 8

// Short is the recorded part of an id.
func Short(id string) string {
	if len(id) > idChars {
		return id[:idChars]
	}
	return id
}

// group is one machine: the nodes on it and the ids that joined them.
type group struct {
	nodes     []string
	boot      string          // the boot id of its nodes that report one ("" if none)
	machines  map[string]bool // the machine ids its nodes report
	byBoot    bool            // two of its nodes share the boot id
	byMachine string          // the machine id that joined it with another group
}

// Of groups the nodes named (a run's nodes; repeats and empty names are
// dropped) by machine, from the cluster's Node objects (any that include
// them). A named node without a Node object, or whose kubelet reports
// neither id, is counted as a machine of its own, and the note says so.
// Nil when no node is named.
func Of(names []string, nodes []corev1.Node) *v1alpha1.TestbedMachines {
	names = distinct(names)
	if len(names) == 0 {
		return nil
	}
	info := map[string]corev1.NodeSystemInfo{}
	for _, n := range nodes {
		info[n.Name] = n.Status.NodeInfo
	}
	var missing, silent []string
	var groups []*group
	byBoot := map[string]*group{}
	for _, name := range names {
		ni, found := info[name]
		boot, machine := strings.TrimSpace(ni.BootID), strings.TrimSpace(ni.MachineID)
		switch {
		case !found:
			missing = append(missing, name)
		case boot == "" && machine == "":
			silent = append(silent, name)
		}
		if g := byBoot[boot]; boot != "" && g != nil {
			g.nodes = append(g.nodes, name)
			g.byBoot = true
			if machine != "" {
				g.machines[machine] = true
			}
			continue
		}
		g := &group{nodes: []string{name}, boot: boot, machines: map[string]bool{}}
		if machine != "" {
			g.machines[machine] = true
		}
		if boot != "" {
			byBoot[boot] = g
		}
		groups = append(groups, g)
	}
	// Join groups that share a machine id unless their boot ids differ;
	// a join can make another possible, so until nothing joins.
	var cloned []string
	for joined := true; joined; {
		joined = false
		for i := 0; i < len(groups) && !joined; i++ {
			for j := i + 1; j < len(groups) && !joined; j++ {
				a, b := groups[i], groups[j]
				id := sharedMachineID(a, b)
				if id == "" {
					continue
				}
				if a.boot != "" && b.boot != "" {
					// Different kernels: clones of one image, not one machine.
					cloned = appendOnce(cloned, fmt.Sprintf("%s and %s share machine id %s but not their boot id: separate machines (cloned from one image), counted apart",
						strings.Join(a.nodes, ", "), strings.Join(b.nodes, ", "), Short(id)))
					continue
				}
				a.nodes = append(a.nodes, b.nodes...)
				if a.boot == "" {
					a.boot = b.boot
				}
				a.byBoot = a.byBoot || b.byBoot
				a.byMachine = id
				for m := range b.machines {
					a.machines[m] = true
				}
				groups = append(groups[:j], groups[j+1:]...)
				joined = true
			}
		}
	}
	out := &v1alpha1.TestbedMachines{Nodes: int32(len(names)), Machines: int32(len(groups))}
	for _, g := range groups {
		if len(g.nodes) < 2 {
			continue
		}
		sort.Strings(g.nodes)
		h := v1alpha1.TestbedHost{Nodes: g.nodes, By: v1alpha1.HostBootID, ID: Short(g.boot)}
		if !g.byBoot {
			h.By, h.ID = v1alpha1.HostMachineID, Short(g.byMachine)
		}
		out.Hosts = append(out.Hosts, h)
	}
	sort.Slice(out.Hosts, func(i, j int) bool { return out.Hosts[i].Nodes[0] < out.Hosts[j].Nodes[0] })
	out.Note = note(out)
	var extra []string
	if len(missing) > 0 {
		extra = append(extra, fmt.Sprintf("%s %s no Node object: counted as a machine of its own", strings.Join(missing, ", "), has(len(missing))))
	}
	if len(silent) > 0 {
		extra = append(extra, fmt.Sprintf("%s %s neither a machine id nor a boot id: counted as a machine of its own", strings.Join(silent, ", "), report(len(silent))))
	}
	extra = append(extra, cloned...)
	if len(extra) > 0 {
		out.Note += "; " + strings.Join(extra, "; ")
	}
	return out
}

// Unknown is the record of nodes whose Node objects could not be read:
// how many, and why whether they share machines is not known.
func Unknown(names []string, why string) *v1alpha1.TestbedMachines {
	names = distinct(names)
	if len(names) == 0 {
		return nil
	}
	return &v1alpha1.TestbedMachines{Nodes: int32(len(names)),
		Note: fmt.Sprintf("whether the %s share machines is not known: %s", plural(len(names), "node"), why)}
}

// Known says whether m counted the machines.
func Known(m *v1alpha1.TestbedMachines) bool { return m != nil && m.Machines > 0 }

// Shared says whether some machine of m carries more than one node.
func Shared(m *v1alpha1.TestbedMachines) bool { return m != nil && len(m.Hosts) > 0 }

// HostOf is the machine of m that carries node with others; nil when
// node is on a machine of its own (or m does not know).
func HostOf(m *v1alpha1.TestbedMachines, node string) *v1alpha1.TestbedHost {
	if m == nil {
		return nil
	}
	for i := range m.Hosts {
		for _, n := range m.Hosts[i].Nodes {
			if n == node {
				return &m.Hosts[i]
			}
		}
	}
	return nil
}

// Count is "3 nodes on 1 machine", "3 nodes, machines unknown".
func Count(m *v1alpha1.TestbedMachines) string {
	if m == nil {
		return "unknown"
	}
	if !Known(m) {
		return plural(int(m.Nodes), "node") + ", machines unknown"
	}
	return plural(int(m.Nodes), "node") + " on " + plural(int(m.Machines), "machine")
}

// NodesOf are the nodes under a testbed record: the probed nodes and,
// once placed, the workers' and the coordinator's, with extra (the
// brokers' and bookies' nodes, which the record holds only when probed).
func NodesOf(tb *v1alpha1.Testbed, extra ...string) []string {
	out := append([]string(nil), extra...)
	if tb == nil {
		return distinct(out)
	}
	for _, n := range tb.Nodes {
		out = append(out, n.Node)
	}
	if w := tb.Workers; w != nil {
		for _, p := range w.Pods {
			out = append(out, p.Node)
		}
	}
	return distinct(out)
}

// IDText is "boot id 1a2b3c4d".
func IDText(h v1alpha1.TestbedHost) string {
	if h.By == v1alpha1.HostMachineID {
		return "machine id " + h.ID
	}
	return "boot id " + h.ID
}

func note(m *v1alpha1.TestbedMachines) string {
	var each []string
	for _, h := range m.Hosts {
		each = append(each, fmt.Sprintf("%s share %s", strings.Join(h.Nodes, ", "), IDText(h)))
	}
	switch {
	case m.Nodes == 1:
		return "1 node on 1 machine"
	case len(m.Hosts) == 0:
		return fmt.Sprintf("%d nodes on %d machines: no two share a boot or machine id", m.Nodes, m.Machines)
	case m.Machines == 1:
		return fmt.Sprintf("%d nodes on 1 machine (%s): their CPU, memory and disk figures are one machine's, measured %d times, not %d machines'",
			m.Nodes, each[0], m.Nodes, m.Nodes)
	default:
		return fmt.Sprintf("%d nodes on %d machines (%s): nodes on one machine share its CPUs, memory, disk and page cache, so their figures are that machine's, measured once per node",
			m.Nodes, m.Machines, strings.Join(each, "; "))
	}
}

func sharedMachineID(a, b *group) string {
	var ids []string
	for m := range a.machines {
		if b.machines[m] {
			ids = append(ids, m)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	return ids[0]
}

func distinct(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func has(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func report(n int) string {
	if n == 1 {
		return "reports"
	}
	return "report"
}
