package pagecache

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/workload"
)

// The results ConfigMap is the coordinator's, but whoever may edit
// ConfigMaps in the run's namespace can write a request there too, and
// each request the operator answers runs a privileged Job on every broker
// node. So the operator answers no more requests than the run's own
// coordinator makes: MaxRequests, one per repeat of a backlog workload.

// MaxRequests is how many mid-run drops run's coordinator asks for: one
// per repeat of a backlog (or mixed) workload, between the backlog build
// and its drain (internal/coordinator, backlog.go), numbered 1 to
// spec.repeats across the repeats (NextRequest); none for any other
// workload, or without spec.testbed.dropPageCache (the coordinator is then
// started without --drop-page-cache). A coordinator whose drop fails ends
// its run, so it never asks again. Pure.
func MaxRequests(run *v1alpha1.BenchmarkRun) int32 {
	if run.Spec.Testbed == nil || !run.Spec.Testbed.DropPageCache || !workload.IsBacklog(run.Spec.Workload) {
		return 0
	}
	return int32(run.Spec.RepeatCount())
}

// Refusal says why req is not answered with drop Jobs, "" when it is: its
// seq must be one the coordinator can write, 1 to max (MaxRequests). A
// request already answered is not refused here: the operator answers it
// again from its record (a restart between the record and the answer),
// without new Jobs. Pure.
func Refusal(req Request, max int32) string {
	if req.Seq >= 1 && req.Seq <= max {
		return ""
	}
	why := fmt.Sprintf("this run asks for %d mid-run drops at most (one per repeat of a backlog workload: spec.repeats %d, before each backlog drain)", max, max)
	if max == 0 {
		why = "this run's workload asks for no mid-run drop (only a backlog workload, spec.workload.consumerBacklogSizeGB, drops again before its drain)"
	}
	return fmt.Sprintf("page-cache drop request %d in results ConfigMap key %s refused, and no privileged Job run for it: %s; "+
		"the request was not written by this run's coordinator: leave the results ConfigMap's %s key to it",
		req.Seq, KeyRequest, why, KeyRequest)
}
