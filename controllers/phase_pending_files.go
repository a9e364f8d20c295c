package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/ombdriver"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/workload"
)

// Reasons of a run refused in Pending for the files it names.
const (
	ReasonDriverFileInvalid = "DriverFileInvalid"
	ReasonPayloadFileAbsent = "PayloadFileUnavailable"
)

// refusal is bad input of the user's: the run fails at once with a message
// that names the field and the fix, before anything is deployed.
type refusal struct{ reason, message string }

// readRunFiles reads the files a run names in ConfigMaps, before any broker
// is deployed, so a bad file costs nothing: the driver file of
// spec.driver.configMapRef goes through ombdriver into status.driver, and
// spec.payload's ConfigMap must hold payloadFile with messageSize bytes.
// Errors of the API server are returned to be retried; bad input is a
// refusal.
func (r *BenchmarkRunReconciler) readRunFiles(ctx context.Context, run *v1alpha1.BenchmarkRun) (*refusal, []ombdriver.Dropped, error) {
	if ref, err := r.checkPayload(ctx, run); ref != nil || err != nil {
		return ref, nil, err
	}
	if ref, err := r.readPriceModel(ctx, run); ref != nil || err != nil {
		return ref, nil, err
	}
	return r.readDriverFile(ctx, run)
}

// ReasonPriceModelInvalid is a run refused for its spec.cost.
const ReasonPriceModelInvalid = "PriceModelInvalid"

// readPriceModel puts spec.cost's price model, inline or from its
// ConfigMap, into status.priceModel (nil without spec.cost: the default
// prices), checked, so that a bad price is refused before anything is
// deployed and a ConfigMap changed later does not reprice the run.
func (r *BenchmarkRunReconciler) readPriceModel(ctx context.Context, run *v1alpha1.BenchmarkRun) (*refusal, error) {
	c := run.Spec.Cost
	if c == nil {
		return nil, nil
	}
	if c.PriceModel != nil {
		if err := cost.Validate(*c.PriceModel); err != nil {
			return &refusal{ReasonPriceModelInvalid, fmt.Sprintf("spec.cost.priceModel: %v", err)}, nil
		}
		run.Status.PriceModel = c.PriceModel.DeepCopy()
		return nil, nil
	}
	if c.PriceModelRef == nil {
		return nil, nil
	}
	const fld = "spec.cost.priceModelRef"
	create := fmt.Sprintf("kubectl create configmap %s -n %s --from-file=prices.yaml (docs/cost.md)", c.PriceModelRef.Name, run.Namespace)
	data, key, ref, err := r.configMapFile(ctx, run.Namespace, *c.PriceModelRef, "", fld, create)
	if ref != nil || err != nil {
		if ref != nil {
			ref.reason = ReasonPriceModelInvalid
		}
		return ref, err
	}
	m, err := cost.Parse(data)
	if err != nil {
		return &refusal{ReasonPriceModelInvalid, fmt.Sprintf("%s: the price model in ConfigMap %s, key %s: %v", fld, c.PriceModelRef.Name, key, err)}, nil
	}
	run.Status.PriceModel = &m
	return nil, nil
}

func (r *BenchmarkRunReconciler) readDriverFile(ctx context.Context, run *v1alpha1.BenchmarkRun) (*refusal, []ombdriver.Dropped, error) {
	d := run.Spec.Driver
	if d == nil || d.ConfigMapRef == nil {
		return nil, nil, nil
	}
	const fld = "spec.driver.configMapRef"
	create := fmt.Sprintf("kubectl create configmap %s -n %s --from-file=driver-%s/%s.yaml",
		d.ConfigMapRef.Name, run.Namespace, run.Spec.System, run.Spec.System)
	data, key, ref, err := r.configMapFile(ctx, run.Namespace, *d.ConfigMapRef, "", fld, create)
	if ref != nil || err != nil {
		return ref, nil, err
	}
	where := fmt.Sprintf("%s: the driver file in ConfigMap %s, key %s", fld, d.ConfigMapRef.Name, key)
	f, err := ombdriver.Parse(data)
	if err != nil {
		return &refusal{ReasonDriverFileInvalid, fmt.Sprintf("%s: %v", where, err)}, nil, nil
	}
	eff := run.Status.Durability
	if eff == nil {
		// reconcileNew records it; a status written by an older operator may
		// lack it.
		e, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
		if err != nil {
			return &refusal{v1alpha1.ReasonInvalid, err.Error()}, nil, nil
		}
		eff = &e
	}
	mapped, dropped, err := ombdriver.Map(f, run.Spec.System, *eff)
	if err != nil {
		return &refusal{ReasonDriverFileInvalid, fmt.Sprintf("%s: %v", where, err)}, dropped, nil
	}
	spec := d.DeepCopy()
	spec.ConfigMapRef = nil
	run.Status.Driver = ombdriver.Merge(mapped, spec)
	return nil, dropped, nil
}

func (r *BenchmarkRunReconciler) checkPayload(ctx context.Context, run *v1alpha1.BenchmarkRun) (*refusal, error) {
	w := run.Spec.Workload
	if !workload.ReadsPayloadFile(w) {
		return nil, nil
	}
	create := fmt.Sprintf("kubectl create configmap NAME -n %s --from-file=%s", run.Namespace, w.PayloadFile)
	if run.Spec.Payload == nil {
		// The coordinator reads the file inside its pod, where no file of
		// the machine the run was written on exists.
		return &refusal{ReasonPayloadFileAbsent, fmt.Sprintf(
			"spec.workload.payloadFile %q must reach the coordinator pod: put it in a ConfigMap (%s; a file that is not UTF-8 goes to binaryData; a ConfigMap holds at most 1 MiB) and set spec.payload.configMapRef.name to NAME, or remove payloadFile for a generated payload",
			w.PayloadFile, create)}, nil
	}
	ref := run.Spec.Payload.ConfigMapRef
	create = strings.Replace(create, "NAME", ref.Name, 1)
	data, key, refused, err := r.configMapFile(ctx, run.Namespace, ref, workers.PayloadKey(run), "spec.payload.configMapRef", create)
	if refused != nil || err != nil {
		if refused != nil {
			refused.reason = ReasonPayloadFileAbsent
		}
		return refused, err
	}
	if len(data) != int(w.MessageSize) {
		return &refusal{ReasonPayloadFileAbsent, fmt.Sprintf(
			"spec.workload.payloadFile (ConfigMap %s, key %s) is %d bytes but messageSize is %d; they must be equal: set messageSize: %d or use a payload file of %d bytes",
			ref.Name, key, len(data), w.MessageSize, len(data), w.MessageSize)}, nil
	}
	return nil, nil
}

// configMapFile reads one file of a ConfigMap: ref.Key, else defaultKey,
// else the ConfigMap's only key; from data or binaryData. fld names the
// reference in messages, create is the command that makes the ConfigMap.
func (r *BenchmarkRunReconciler) configMapFile(ctx context.Context, ns string, ref v1alpha1.ConfigMapFileRef, defaultKey, fld, create string) ([]byte, string, *refusal, error) {
	var cm corev1.ConfigMap
	err := r.apiReader().Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, "", &refusal{ReasonDriverFileInvalid, fmt.Sprintf(
			"%s.name: ConfigMap %s not found in namespace %s; create it (%s), then create the run again", fld, ref.Name, ns, create)}, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	key := ref.Key
	if key == "" {
		key = defaultKey
	}
	if key == "" {
		if len(keys) != 1 {
			return nil, "", &refusal{ReasonDriverFileInvalid, fmt.Sprintf(
				"%s.key: ConfigMap %s holds %d files (%s); set key to the one to use", fld, ref.Name, len(keys), strings.Join(keys, ", "))}, nil
		}
		key = keys[0]
	}
	if v, ok := cm.Data[key]; ok {
		return []byte(v), key, nil, nil
	}
	if v, ok := cm.BinaryData[key]; ok {
		return v, key, nil, nil
	}
	which := fld + ".key"
	if ref.Key == "" && defaultKey != "" {
		which = fmt.Sprintf("%s.key (empty: the base name of spec.workload.payloadFile, %s)", fld, key)
	}
	return nil, "", &refusal{ReasonDriverFileInvalid, fmt.Sprintf(
		"%s: ConfigMap %s has no key %s (its keys: %s); set key to one of them, or add the file (%s)",
		which, ref.Name, key, strings.Join(keys, ", "), create)}, nil
}
