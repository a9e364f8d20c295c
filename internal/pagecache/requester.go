package pagecache

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// DefaultTimeout bounds the coordinator's wait for an answer. The
// operator answers within a drop Job's deadline (120 s) plus its grace
// (60 s) plus a poll, even when the Jobs never run; a longer bound lets the
// operator's precise reason reach the coordinator instead of a bare
// timeout.
const DefaultTimeout = 4 * time.Minute

// Requester asks the operator through the run's results ConfigMap (the
// coordinator side of the handshake).
type Requester struct {
	Client    client.Client
	Namespace string
	// Name is the results ConfigMap (<run>-results).
	Name string
	// Labels and Owner are set when the ConfigMap does not exist yet (it
	// is created before the results are written), as the results have them.
	Labels map[string]string
	Owner  []metav1.OwnerReference
	// Timeout bounds the wait for the answer (default DefaultTimeout);
	// Poll is how often the ConfigMap is read (default 2 s).
	Timeout, Poll time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (r *Requester) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// DropPageCache writes the next request and waits for its answer. A
// Failed answer or a timeout is an error that says why; the record says
// what happened either way.
func (r *Requester) DropPageCache(ctx context.Context, reason string) (v1alpha1.PageCacheDrop, error) {
	timeout, poll := r.Timeout, r.Poll
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if poll <= 0 {
		poll = 2 * time.Second
	}
	req, err := r.request(ctx, reason)
	if err != nil {
		return v1alpha1.PageCacheDrop{Reason: reason, At: metav1.NewTime(r.now()), Message: err.Error()}, err
	}
	deadline := time.Now().Add(timeout)
	for {
		var cm corev1.ConfigMap
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, &cm)
		if err != nil && !apierrors.IsNotFound(err) {
			return r.failed(req, err)
		}
		ack, ok, err := AnswerTo(cm.Data, req.Seq)
		if err != nil {
			return r.failed(req, err)
		}
		if ok {
			drop := Drop(req, ack)
			if ack.State != StateDone {
				return drop, fmt.Errorf("spec.testbed.dropPageCache: the operator could not drop the page cache %s: %s", req.Reason, ack.Message)
			}
			return drop, nil
		}
		if time.Now().After(deadline) {
			return r.failed(req, fmt.Errorf("spec.testbed.dropPageCache: the operator did not answer page-cache drop request %d (%s) in ConfigMap %s/%s key %s within %s; "+
				"check that the operator is running (its logs say why), or set spec.testbed.dropPageCache to false",
				req.Seq, req.Reason, r.Namespace, r.Name, KeyAck, timeout))
		}
		select {
		case <-ctx.Done():
			return r.failed(req, ctx.Err())
		case <-time.After(poll):
		}
	}
}

func (r *Requester) failed(req Request, err error) (v1alpha1.PageCacheDrop, error) {
	return v1alpha1.PageCacheDrop{Seq: req.Seq, Reason: req.Reason, At: metav1.NewTime(r.now()), Message: err.Error()}, err
}

// request writes the next request into the ConfigMap, creating it if need
// be; a conflict (the operator answered meanwhile) is retried on a fresh
// copy.
func (r *Requester) request(ctx context.Context, reason string) (Request, error) {
	for attempt := 0; ; attempt++ {
		var cm corev1.ConfigMap
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, &cm)
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return Request{}, fmt.Errorf("page-cache drop request: get ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
		}
		req, err := NextRequest(cm.Data, reason, r.now())
		if err != nil {
			return Request{}, err
		}
		if cm.Data, err = Put(cm.Data, KeyRequest, req); err != nil {
			return Request{}, err
		}
		if create {
			cm.ObjectMeta = metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, Labels: r.Labels, OwnerReferences: r.Owner}
			err = r.Client.Create(ctx, &cm)
		} else {
			err = r.Client.Update(ctx, &cm)
		}
		if err == nil {
			return req, nil
		}
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 5 {
			continue
		}
		return Request{}, fmt.Errorf("page-cache drop request: write ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
	}
}
