package localrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/admission"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/workload"
)

// LoadRun reads a BenchmarkRun YAML file the way the API server would take
// it: strict decoding (an unknown or misspelt field is an error naming it),
// then the CRD's defaults, then the CRD's validation, so a file that runs
// locally is one `kubectl apply` accepts, and the other way round. Every
// problem found is reported, each naming the field and the fix.
func LoadRun(path string) (*v1alpha1.BenchmarkRun, error) {
	return Load(path, "")
}

// Load is LoadRun with spec.workload replaced by the OMB workload file at
// workloadPath when it is not empty (`streambench run --workload`); the
// run file's own spec.workload is then not read at all, and may be absent.
func Load(path, workloadPath string) (*v1alpha1.BenchmarkRun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the BenchmarkRun file: %w", err)
	}
	run, err := decodeRun(data, filepath.Dir(path), workloadPath)
	if err != nil {
		// One problem per line (errors.Join), listed under the file.
		if lines := strings.Split(err.Error(), "\n"); len(lines) > 1 {
			return nil, fmt.Errorf("%s: %d problems:\n  - %s", path, len(lines), strings.Join(lines, "\n  - "))
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// decodeRun is Load on the file's bytes; dir resolves a relative
// spec.workload.payloadFile, as workload.ParseFile does for workload files.
//
// The run is admitted by the CRD itself (internal/admission: the API
// server's pruning, defaulting, OpenAPI and CEL validation on the schema the
// binary embeds); only what a cluster cannot tell about this machine is
// checked here after (localChecks).
func decodeRun(data []byte, dir, workloadPath string) (*v1alpha1.BenchmarkRun, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, err
	}
	obj, err := admission.Decode(doc)
	if err != nil {
		return nil, fmt.Errorf("the file must hold one BenchmarkRun: %w", err)
	}

	var errs []error
	if workloadPath != "" {
		// The run file's own spec.workload is not read at all. The OMB
		// file is read by internal/workload (OMB's keys, a suggestion for
		// a misspelt one), then admitted with the run like an inline one.
		wl, err := workload.LoadFile(workloadPath, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("--workload %w", err))
		}
		setWorkload(obj, wl, err == nil)
	}

	kind := admission.BenchmarkRun()
	refused := kind.Create(obj)
	if len(errs) > 0 {
		// A --workload that did not load is not also "required".
		refused = refused.Filter(func(e error) bool {
			fe, ok := e.(*field.Error)
			return ok && fe.Field == "spec.workload" && fe.Type == field.ErrorTypeRequired
		})
	}
	if err := kind.Explain(refused, runHints); err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	run := &v1alpha1.BenchmarkRun{}
	if err := admission.FromObject(obj, run); err != nil {
		return nil, err
	}
	if workloadPath == "" {
		// As for a workload file: the working directory (OMB's place),
		// then next to the run file.
		wp := field.NewPath("spec", "workload")
		if miss := workload.MissingPayloadFile(run.Spec.Workload, dir, wp); miss != nil {
			errs = append(errs, miss)
		} else {
			run.Spec.Workload.PayloadFile, _ = workload.FindPayloadFile(dir, run.Spec.Workload.PayloadFile)
			for _, e := range workload.CheckPayloadFile(run.Spec.Workload, wp) {
				errs = append(errs, e)
			}
		}
	}
	if err := errors.Join(append(errs, localChecks(run))...); err != nil {
		return nil, err
	}
	return run, nil
}

// runHints are local mode's fixes added to the API server's messages.
var runHints = admission.Hints{
	"spec.workload":                    "add an OMB workload (at least messageSize, e.g. messageSize: 1024), or give one with --workload FILE",
	"metadata.name":                    "name the run (it names the results directory results/<name>), or set metadata.generateName",
	"spec.system":                      "set system: kafka or system: pulsar",
	"spec.durability.level":            "set 1, 2, 3 or 4 (the levels of docs/methodology.md)",
	"spec.workload.messageSize":        "bytes per message, e.g. 1024",
	"spec.cluster.existing.serviceURL": "e.g. pulsar://localhost:6650",
	"spec.cluster.existing.adminURL":   "e.g. http://localhost:8080",
}

// setWorkload puts a workload read from its own file under spec.workload
// (spec created when absent); ok false removes the run file's own.
func setWorkload(obj map[string]any, wl v1alpha1.WorkloadSpec, ok bool) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	delete(spec, "workload")
	if !ok {
		return
	}
	b, err := json.Marshal(wl)
	if err != nil {
		return
	}
	var m map[string]any
	if utiljson.Unmarshal(b, &m) == nil {
		spec["workload"] = m
	}
}

// singleDocument returns the only YAML document in data: a second one
// would otherwise be silently ignored.
func singleDocument(data []byte) ([]byte, error) {
	docs, err := workload.Documents(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("the file is empty: it needs one BenchmarkRun (see config/samples/run-ack2-async.yaml)")
	case 1:
		return docs[0], nil
	}
	return nil, fmt.Errorf("the file holds %d YAML documents (separated by ---); local mode runs one BenchmarkRun per file", len(docs))
}

// localChecks are what a cluster accepts but local mode cannot do, and
// what the controller refuses only once the run has started: the effective
// durability settings must exist for this system (durability.Translate).
func localChecks(run *v1alpha1.BenchmarkRun) error {
	var errs []error
	if e := run.Spec.Cluster.Existing; e != nil && e.StrimziCluster != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "cluster", "existing", "strimziCluster"),
			"names a Strimzi Kafka inside a Kubernetes cluster, which local mode cannot read; set bootstrapServers: host:port instead (or run it on the cluster with kubectl apply)"))
	}
	if m := run.Spec.Cluster.Managed; m != nil && m.Security != nil && m.Security.Secured() {
		// The local brokers listen in plaintext for anonymous clients: the
		// run would be measured plaintext and labelled secured.
		errs = append(errs, field.Forbidden(field.NewPath("spec", "cluster", "managed", "security"),
			"local mode starts brokers with plaintext, anonymous listeners only; remove it, or start secured local brokers (hack/local-brokers.sh kafka start --secure) and run against them with spec.cluster.existing.tls and authentication and --secrets"))
	}
	if _, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault()); err != nil {
		errs = append(errs, err)
	}
	// spec.faults as the controller checks it when a run starts, then
	// what only a cluster can do (no pods here, one Pulsar JVM).
	spec := field.NewPath("spec")
	fe := faults.Validate(&run.Spec, spec)
	if len(fe) == 0 {
		fe = faults.LocalChecks(&run.Spec, spec)
	}
	for _, e := range fe {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// admitRun admits a run built in Go (a suite's cell) as a run file is:
// the CRD's defaults and rules, then localChecks.
func admitRun(run *v1alpha1.BenchmarkRun) error {
	kind := admission.BenchmarkRun()
	if err := kind.Explain(admission.CreateTyped(kind, run), runHints); err != nil {
		return err
	}
	return errors.Join(workload.CheckPayloadFile(run.Spec.Workload, field.NewPath("spec", "workload")).ToAggregate(), localChecks(run))
}
