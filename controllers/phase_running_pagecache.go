package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/pagecache"
)

// The mid-run page-cache drop. A backlog or mixed workload writes its
// backlog after the drop before the load, so its catch-up reads would come
// from memory; with spec.testbed.dropPageCache the coordinator asks,
// between the backlog build and the drain, for another drop: a request in
// its results ConfigMap (internal/pagecache), answered here, in the Running
// phase, with the same privileged Jobs as the drop before the load, in
// the operator's namespace (privileged_jobs.go). The state is the request
// and the answer in the ConfigMap, the Jobs named after the request's seq,
// and the record in status.testbed.pageCacheDrops, so a restarted operator
// continues where it was.
//
// The ConfigMap is writable by whoever may edit ConfigMaps in the run's
// namespace, not only by the coordinator. So a request runs Jobs only
// if its seq is one the coordinator can ask (pagecache.MaxRequests: one
// per repeat of a backlog workload) and was not answered before (an
// answer overwritten is given again from the record, with no Job); the
// nodes are always the run's broker nodes, which a request cannot name.

// reconcilePageCacheRequest answers the coordinator's pending request, if
// any. wait > 0 means drop Jobs are still running.
func (r *BenchmarkRunReconciler) reconcilePageCacheRequest(ctx context.Context, run *v1alpha1.BenchmarkRun) (wait time.Duration, err error) {
	cm, foreign, err := runResults(ctx, r.Client, run)
	if err != nil || foreign != "" {
		if foreign != "" {
			log.FromContext(ctx).Info("page-cache requests not read", "reason", foreign)
		}
		return 0, client.IgnoreNotFound(err)
	}
	req, pending, err := pagecache.Pending(cm.Data)
	if err != nil || !pending {
		// A request that does not parse was not written by a coordinator
		// of this version; the coordinator's own bound ends its wait.
		return 0, err
	}
	ack := pagecache.Ack{Seq: req.Seq}
	var nodes []brokerNode
	if dropPageCache(run) {
		if nodes, _, err = r.brokerNodes(ctx, run); err != nil {
			return 0, err
		}
	}
	recorded := recordedDrop(run.Status.Testbed, req.Seq)
	refusal := pagecache.Refusal(req, pagecache.MaxRequests(run))
	switch {
	case !dropPageCache(run):
		// Answered, not ignored: a coordinator that waits for nobody
		// would stall the run for its whole timeout.
		ack.State, ack.Message = pagecache.StateFailed,
			"spec.testbed.dropPageCache is false, so the operator runs no page-cache Job for this run; set spec.testbed.dropPageCache to true in a new run, or start the coordinator without --drop-page-cache"
	case recorded != nil:
		// Answered before: a restart between the record and the answer,
		// or an answer overwritten. The record says again; no Job runs
		// twice for one request.
		ack.State, ack.Message, ack.Nodes = pagecache.StateFailed, recorded.Message, recorded.Nodes
		if recorded.Dropped {
			ack.State = pagecache.StateDone
		}
	case refusal != "":
		ack.State, ack.Message = pagecache.StateFailed, refusal
	default:
		finished, failure, err := r.dropPageCaches(ctx, run, nodes, req.Seq)
		if err != nil {
			return 0, err
		}
		if !finished {
			return time.Second, nil
		}
		if failure != "" {
			ack.State, ack.Message = pagecache.StateFailed, failure
		} else {
			ack.State, ack.Nodes = pagecache.StateDone, nodeNames(nodes)
		}
	}
	ack.At = time.Now().UTC()
	if recorded != nil {
		ack.At = recorded.At.UTC()
	}

	// The record first, then the answer: the answer ends the request, so
	// a record written after it would be lost to a restart in between; the
	// seq keeps a retried record from being added twice. Only the requests
	// the run can make are recorded: one written beyond them is answered
	// (and an event says so), but cannot grow the run's status.
	if refusal == "" {
		if _, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
			if tb := run.Status.Testbed; tb != nil && !hasDrop(tb, req.Seq) {
				tb.PageCacheDrops = append(tb.PageCacheDrops, pagecache.Drop(req, ack))
			}
			return true
		}); err != nil {
			return 0, err
		}
	}
	if cm.Data, err = pagecache.Put(cm.Data, pagecache.KeyAck, ack); err != nil {
		return 0, err
	}
	if err := r.Update(ctx, cm); err != nil {
		return 0, err // a conflict: the next reconcile answers again
	}
	eventType, reason, note := corev1.EventTypeNormal, "PageCacheDropped", fmt.Sprintf("page cache dropped on %v %s (request %d)", ack.Nodes, req.Reason, req.Seq)
	if ack.State != pagecache.StateDone {
		eventType, reason, note = corev1.EventTypeWarning, "PageCacheNotDropped", fmt.Sprintf("page cache not dropped %s (request %d): %s", req.Reason, req.Seq, ack.Message)
	}
	log.FromContext(ctx).Info(note)
	if r.Recorder != nil {
		r.Recorder.Eventf(run, nil, eventType, reason, string(run.Status.Phase), "%s", note)
	}
	// Done with; a Job left behind goes when the run finishes
	// (phase_finished.go).
	if len(nodes) > 0 && refusal == "" {
		_, err = r.deletePrivileged(ctx, run, dropCacheJobNames(run, nodes, req.Seq)...)
	}
	return 0, err
}

func hasDrop(tb *v1alpha1.Testbed, seq int32) bool {
	return recordedDrop(tb, seq) != nil
}

// recordedDrop is the record of request seq in status.testbed, if the
// operator answered it.
func recordedDrop(tb *v1alpha1.Testbed, seq int32) *v1alpha1.PageCacheDrop {
	if tb == nil {
		return nil
	}
	for i := range tb.PageCacheDrops {
		if d := &tb.PageCacheDrops[i]; d.Seq == seq {
			return d
		}
	}
	return nil
}
