package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/machines"
	"github.com/streambench/streambench-operator/internal/results"
)

// Nodes that share a machine (status.testbed.machines, internal/machines)
// each report the whole machine: the report says so above the figures it
// qualifies, and compare says it of each such run and flags a pair whose
// nodes share machines differently.

// machinesView is the testbed section's line on the machines.
type machinesView struct {
	// Shared: some machine carries several of the run's nodes.
	Shared bool
	Note   string
}

// machinesOf is the testbed's machines line and, for each node on a
// machine with others, the id they share ("boot id 1a2b3c4d"), shown
// beside the node in the node table.
func machinesOf(tb *v1alpha1.Testbed) (*machinesView, map[string]string) {
	if tb == nil || tb.Machines == nil {
		return nil, nil
	}
	m := tb.Machines
	ids := map[string]string{}
	for _, h := range m.Hosts {
		for _, n := range h.Nodes {
			ids[n] = machines.IDText(h)
		}
	}
	return &machinesView{Shared: machines.Shared(m), Note: m.Note}, ids
}

// sharedBrokerNodes is the broker resources' line when the run's nodes
// share machines: brokers on one machine competed for it.
func sharedBrokerNodes(s *results.Summary) string {
	if s.Testbed == nil || !machines.Shared(s.Testbed.Machines) {
		return ""
	}
	return fmt.Sprintf("The run's nodes share machines (%s; see Testbed): brokers on one machine shared its CPUs, disk, network and page cache, and each node's figures are that machine's, not a machine of the node's own.",
		machines.Count(s.Testbed.Machines))
}

// sharedHostNode says, when the node whose CPUs the broker resources
// judged shares its machine with other nodes of the run, what that does
// to the verdict: the CPUs are the machine's, and "everything else"
// holds the other nodes' pods.
func sharedHostNode(s *results.Summary) string {
	h := hostOf(s)
	if h == nil || h.Node == "" || s.Testbed == nil {
		return ""
	}
	host := machines.HostOf(s.Testbed.Machines, h.Node)
	if host == nil {
		return ""
	}
	others := slices.DeleteFunc(slices.Clone(host.Nodes), func(n string) bool { return n == h.Node })
	return fmt.Sprintf("node %s shares one machine with %s (%s): its %d CPUs and their busy share are that machine's, and \"everything else\" includes the pods of %s",
		h.Node, strings.Join(others, ", "), machines.IDText(*host), h.CPUs, map[bool]string{true: "that node", false: "those nodes"}[len(others) == 1])
}

// machinesCell is a run's machines in compare's Testbed table.
func machinesCell(tb *v1alpha1.Testbed) string {
	switch {
	case tb == nil:
		return "–"
	case tb.Machines != nil:
		return machines.Count(tb.Machines)
	case tb.Scope == v1alpha1.TestbedLocalHost:
		return "this host"
	default:
		return "not recorded"
	}
}

// machinesWarnings are compare's words on each run whose nodes share
// machines, and on each run whose machines are not known beside a run
// whose are.
func machinesWarnings(runs []Named) []string {
	var out []string
	known := slices.ContainsFunc(runs, func(n Named) bool { return n.Summary.Testbed != nil && machines.Known(n.Summary.Testbed.Machines) })
	for _, n := range runs {
		tb := n.Summary.Testbed
		if tb == nil || tb.Scope == v1alpha1.TestbedLocalHost {
			continue
		}
		m := tb.Machines
		switch {
		case machines.Shared(m):
			whose := "the per-node figures (CPU, memory, disk, the busiest node's CPU) of nodes on one machine are that machine's"
			if m.Machines == 1 {
				whose = "its per-node figures (CPU, memory, disk, the busiest node's CPU) are the one machine's"
			}
			var each []string
			for _, h := range m.Hosts {
				each = append(each, fmt.Sprintf("%s share %s", strings.Join(h.Nodes, ", "), machines.IDText(h)))
			}
			out = append(out, fmt.Sprintf("%s: %s (%s): %s, not separate machines'",
				n.Name, machines.Count(m), strings.Join(each, "; "), whose))
		case known && m == nil:
			out = append(out, fmt.Sprintf("%s: which of its nodes share a machine is not recorded (results from before streambench recorded it, or no node of the run was known before the load): whether its per-node figures are separate machines' is not checked", n.Name))
		case known && !machines.Known(m):
			out = append(out, fmt.Sprintf("%s: %s: whether its per-node figures are separate machines' is not checked", n.Name, m.Note))
		}
	}
	return out
}

// machinesFlag flags a pair whose nodes share machines differently (both
// known): one run's brokers competed for a machine with each other, the
// other's did not, or not as much.
func machinesFlag(a, b Named, add func(FlagKind, string, ...any)) {
	ma, mb := a.Summary.Testbed.Machines, b.Summary.Testbed.Machines
	if !machines.Known(ma) || !machines.Known(mb) {
		return
	}
	sa, sb := machines.Shared(ma), machines.Shared(mb)
	switch {
	case sa != sb:
		shared, apart := a.Name, b.Name
		if sb {
			shared, apart = b.Name, a.Name
		}
		add(FlagMachines, "%s vs %s: %s's nodes share machines, %s's do not: nodes on one machine compete for its CPUs, disk and page cache, so the results differ by the ground as much as by the broker",
			machines.Count(ma), machines.Count(mb), shared, apart)
	case sa && (ma.Nodes != mb.Nodes || ma.Machines != mb.Machines):
		add(FlagMachines, "%s vs %s: the nodes share machines differently, so the brokers competed for a machine's CPUs, disk and page cache differently",
			machines.Count(ma), machines.Count(mb))
	}
}
