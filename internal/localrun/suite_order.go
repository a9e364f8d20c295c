package localrun

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// clusterMode is how a local suite stands its clusters up.
type clusterMode int

const (
	// clustersOneAtATime starts a cluster, runs its cells and stops it
	// before the next, as the operator does in a cluster: the cells run in
	// status order, repeats interleaved within a cluster only
	// (internal/suite, repeated).
	clustersOneAtATime clusterMode = iota
	// clustersTogether starts every cluster first, runs the cells in
	// crossClusterOrder and stops every cluster at the end.
	clustersTogether
)

// suiteMode chooses how a local suite runs its clusters, and says why and
// what it costs. Only a repeated suite on more than one cluster gains from
// standing them together: its repeats can then alternate between the
// systems, so that a drift of this machine over the suite (thermal, a
// neighbour, page cache) weighs on each system alike instead of reading as
// a difference between them. Pure.
func suiteMode(s *v1alpha1.BenchmarkSuite, oneAtATime bool) (clusterMode, string) {
	clusters, managed := len(s.Status.Clusters), 0
	for _, c := range s.Status.Clusters {
		if c.Managed {
			managed++
		}
	}
	switch {
	case s.Spec.Repeats <= 1 || clusters <= 1:
		return clustersOneAtATime, "clusters one at a time: each cluster's cells, then the next cluster"
	case oneAtATime:
		return clustersOneAtATime, fmt.Sprintf("clusters one at a time (--clusters-one-at-a-time): the %d repeats alternate within each cluster only, so a drift of this machine between clusters reads as a difference between them", s.Spec.Repeats)
	}
	var cost string
	switch {
	case managed == 0:
		cost = "no cost here: the clusters are existing ones, none is started"
	case managed == 1:
		cost = "the local cluster stands through the suite, idle while another is measured (--clusters-one-at-a-time for a machine short of memory)"
	default:
		standing := fmt.Sprintf("all %d clusters", managed)
		if managed < clusters {
			standing = fmt.Sprintf("all %d local clusters", managed)
		}
		cost = standing + " stand at once: an idle cluster beside the one measured, with its memory and background threads (--clusters-one-at-a-time for a machine short of memory)"
	}
	return clustersTogether, fmt.Sprintf("repeats interleaved across the %d clusters (every cell in odd rounds, in reverse in even ones: A B, B A, …); the cost: %s", clusters, cost)
}

// crossClusterOrder is the order a repeated suite's cells run in when all
// its clusters stand at once, as indices of cells (status.cells, in plan
// order): round r = 1..N runs every base cell's repeat r, the base cells
// (what the repeat-1 cells repeat, in plan order) forwards in odd rounds and
// backwards in even ones — A B C, C B A, A B C … — so that no cell always
// runs first or last, nor always right after the same one.
//
// Repeats are found by status' repeatOf and repeat, not by name: a long
// name is shortened with a hash (suite.runName). With one cluster this is
// the plan's own order; a suite not repeated keeps its order too. A cell
// no round reaches (none in a plan of internal/suite) runs after the
// rounds, in plan order, rather than not at all. Pure.
func crossClusterOrder(cells []v1alpha1.SuiteCell) []int {
	type repeatKey struct {
		of     string
		repeat int32
	}
	index := map[repeatKey]int{}
	var bases []string
	var rounds int32
	for i, c := range cells {
		if c.RepeatOf == "" {
			continue
		}
		index[repeatKey{c.RepeatOf, c.Repeat}] = i
		if c.Repeat == 1 {
			bases = append(bases, c.RepeatOf)
		}
		rounds = max(rounds, c.Repeat)
	}
	order := make([]int, 0, len(cells))
	placed := make([]bool, len(cells))
	for r := int32(1); r <= rounds; r++ {
		for k := range bases {
			base := bases[k]
			if r%2 == 0 {
				base = bases[len(bases)-1-k]
			}
			if i, ok := index[repeatKey{base, r}]; ok && !placed[i] {
				order, placed[i] = append(order, i), true
			}
		}
	}
	for i := range cells {
		if !placed[i] {
			order = append(order, i)
		}
	}
	return order
}
