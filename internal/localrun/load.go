package localrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
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
func decodeRun(data []byte, dir, workloadPath string) (*v1alpha1.BenchmarkRun, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, errors.New("the file must hold one BenchmarkRun: a YAML mapping with apiVersion, kind, metadata and spec")
	}

	var errs []error
	spec, _ := raw["spec"].(map[string]any)

	// The workload is decoded by internal/workload, which sees explicit
	// zeros (topics: 0) that the Go type cannot tell from an absent field
	// and suggests the closest OMB key for a misspelt one.
	var wl v1alpha1.WorkloadSpec
	switch {
	case workloadPath != "":
		// nil field path: the fields are the workload file's top level.
		wl, err = workload.LoadFile(workloadPath, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("--workload %w", err))
		}
	case spec == nil || spec["workload"] == nil:
		// reported with the other required fields below
	default:
		b, err := json.Marshal(spec["workload"])
		if err == nil {
			wl, err = workload.Parse(b)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.workload: %w", err))
			break
		}
		// As for a workload file: the working directory (OMB's place),
		// then next to the run file.
		workload.Default(&wl)
		werrs := workload.Validate(wl, field.NewPath("spec", "workload"))
		if miss := workload.MissingPayloadFile(wl, dir, field.NewPath("spec", "workload")); miss != nil {
			werrs = append(werrs, miss)
		} else {
			wl.PayloadFile, _ = workload.FindPayloadFile(dir, wl.PayloadFile)
			werrs = append(werrs, workload.CheckPayloadFile(wl, field.NewPath("spec", "workload"))...)
		}
		for _, e := range werrs {
			errs = append(errs, e)
		}
	}
	hadWorkload := spec != nil && spec["workload"] != nil
	if spec != nil {
		delete(spec, "workload")
	}

	errs = append(errs, explicitZeros(raw)...)

	rest, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	run := &v1alpha1.BenchmarkRun{}
	strict, err := kjson.UnmarshalStrict(rest, run)
	if err != nil {
		return nil, errors.Join(append(errs, describeDecode(err))...)
	}
	for _, e := range strict {
		errs = append(errs, describeStrict(e))
	}
	run.Spec.Workload = wl

	if workloadPath == "" && !hadWorkload {
		errs = append(errs, field.Required(field.NewPath("spec", "workload"),
			"add an OMB workload (at least messageSize, e.g. messageSize: 1024), or give one with --workload FILE"))
	}
	Default(run)
	// The workload was validated above, with its own messages.
	if err := errors.Join(append(errs, Validate(run, true))...); err != nil {
		return nil, err
	}
	return run, nil
}

// singleDocument returns the only YAML document in data: a second one
// would otherwise be silently ignored.
func singleDocument(data []byte) ([]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("the file is empty: it needs one BenchmarkRun (see config/samples/run-ack2-async.yaml)")
	case 1:
		return docs[0], nil
	}
	return nil, fmt.Errorf("the file holds %d YAML documents (separated by ---); local mode runs one BenchmarkRun per file", len(docs))
}

func stripComments(d []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(d, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || string(t) == "---" || string(t) == "..." {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}

// explicitZeroFields are the fields whose Go type cannot tell an explicit 0
// (or "") from an absent field, while the CRD defaults an absent one and
// rejects the explicit value (Minimum=1 or an enum).
var explicitZeroFields = []struct {
	path string
	fix  string
}{
	{"spec.cluster.managed.brokers", "must be at least 1; remove it for the default (3)"},
	{"spec.cluster.managed.bookies", "must be at least 1; remove it for the default (3)"},
	{"spec.cluster.managed.metadataStoreReplicas", "must be at least 1; remove it for the default (3)"},
	{"spec.durability.replication.replicas", "must be at least 1; remove it for the default (3)"},
	{"spec.durability.replication.ackReplicas", "must be at least 1; remove it for the default (2)"},
	{"spec.workers.count", "must be at least 1; remove it for the default (2)"},
	{"spec.teardown.policy", "must be Always, OnSuccess or Never; remove it for the default (Always)"},
	{"spec.durability.local.journal", "must be Write or Bypass; remove it for the default (Write)"},
}

func explicitZeros(raw map[string]any) []error {
	var errs []error
	for _, z := range explicitZeroFields {
		var cur any = raw
		for _, p := range strings.Split(z.path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[p]
		}
		if cur == json.Number("0") || cur == "" {
			errs = append(errs, fmt.Errorf("%s is %s but %s", z.path, map[bool]string{true: "empty", false: "0"}[cur == ""], z.fix))
		}
	}
	return errs
}

// typeErr matches encoding/json's type error, which names the Go struct.
var typeErr = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.(\S+) of type (\S+)`)

// describeDecode rewrites a type error ("cannot unmarshal string into Go
// struct field ManagedCluster.spec.cluster.managed.brokers of type int32")
// into the field and what it takes.
func describeDecode(err error) error {
	m := typeErr.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("decoding: %w", err)
	}
	want := m[3]
	switch {
	case strings.HasPrefix(want, "int") || strings.HasPrefix(want, "v1alpha1.Level"):
		want = "a whole number"
	case strings.HasPrefix(want, "float"):
		want = "a number"
	case want == "string" || strings.HasPrefix(want, "v1alpha1."):
		want = "a string (quote it)"
	case want == "bool":
		want = "true or false"
	case strings.HasPrefix(want, "map"):
		want = "a mapping of keys to string values (quote numbers: '1')"
	}
	return fmt.Errorf("%s must be %s, got a %s", m[2], want, m[1])
}

// describeStrict rewrites a strict-decoding error ("unknown field
// spec.x.y") into one that names the field and suggests the closest known
// one.
func describeStrict(err error) error {
	fe, ok := err.(kjson.FieldError)
	if !ok {
		return err
	}
	path := fe.FieldPath()
	if !strings.HasPrefix(err.Error(), "unknown field") {
		return fmt.Errorf("%s: %v", path, err)
	}
	parent, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	known := knownFields(reflect.TypeOf(v1alpha1.BenchmarkRun{}), parent)
	where := parent
	if where == "" {
		where = "the top level"
	}
	msg := fmt.Sprintf("%s: unknown field %q in %s", path, name, where)
	if s := workload.Suggest(name, known); s != "" {
		return fmt.Errorf("%s; did you mean %q?", msg, s)
	}
	if len(known) > 0 && len(known) <= 16 {
		return fmt.Errorf("%s; known fields: %s", msg, strings.Join(known, ", "))
	}
	return fmt.Errorf("%s; remove it (see the field list with kubectl explain benchmarkrun.%s)", msg, strings.TrimPrefix(parent+".", "."))
}

// knownFields lists the JSON keys of the struct at a dotted path (with
// [i] list indexes) inside t, following json tags as the decoder does.
func knownFields(t reflect.Type, path string) []string {
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			continue
		}
		if i := strings.IndexByte(seg, '['); i >= 0 {
			seg = seg[:i]
		}
		t = deref(t)
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByTag(t, seg)
		if !ok {
			return nil
		}
		t = f.Type
		for k := deref(t).Kind(); k == reflect.Slice || k == reflect.Map; k = deref(t).Kind() {
			t = deref(t).Elem()
		}
	}
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	collectTags(t, &keys)
	sort.Strings(keys)
	return keys
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func jsonName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("json")
	name = strings.Split(tag, ",")[0]
	if name == "-" {
		return "", false
	}
	if name == "" && f.Anonymous {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := jsonName(f)
		if inline {
			if g, ok := fieldByTag(deref(f.Type), tag); ok {
				return g, true
			}
			continue
		}
		if name == tag && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func collectTags(t reflect.Type, keys *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := jsonName(f)
		switch {
		case inline:
			collectTags(deref(f.Type), keys)
		case name != "" && f.IsExported():
			*keys = append(*keys, name)
		}
	}
}

// Default applies the CRD's defaults (the +kubebuilder:default markers of
// api/v1alpha1, as in config/crd/bases) to a decoded run, as the API server
// does before it validates. A run with metadata.generateName and no name
// gets a name, as the API server would give it.
func Default(run *v1alpha1.BenchmarkRun) {
	if run.Name == "" && run.GenerateName != "" {
		const letters = "bcdfghjklmnpqrstvwxz2456789"
		b := make([]byte, 5)
		for i := range b {
			b[i] = letters[rand.IntN(len(letters))]
		}
		run.Name = run.GenerateName + string(b)
	}
	s := &run.Spec
	d := s.DurabilityOrDefault()
	if r := d.Replication; r != nil {
		r = r.DeepCopy()
		if r.Replicas == 0 {
			r.Replicas = durability.DefaultReplicas
		}
		if r.AckReplicas == 0 {
			r.AckReplicas = durability.DefaultAckReplicas
		}
		d.Replication = r
	}
	if l := d.Local; l != nil && l.Journal == "" {
		l = l.DeepCopy()
		l.Journal = v1alpha1.JournalWrite
		d.Local = l
	}
	s.Durability = &d
	if m := s.Cluster.Managed; m != nil {
		if m.Brokers == 0 {
			m.Brokers = 3
		}
		if m.Storage.DeleteClaim == nil {
			t := true
			m.Storage.DeleteClaim = &t
		}
	}
	if s.Workers.Count == 0 {
		s.Workers.Count = 2
	}
	if s.Teardown.Policy == "" {
		s.Teardown.Policy = v1alpha1.TeardownAlways
	}
	if s.Timeouts.Provisioning == nil {
		s.Timeouts.Provisioning = &metav1.Duration{Duration: defaultProvisioningTimeout}
	}
	workload.Default(&s.Workload)
}

// Validate checks a defaulted run against the CRD's schema and CEL rules
// (those that matter without a cluster) and what local mode cannot do,
// returning every problem at once. workloadChecked says the workload was
// already validated by internal/workload, whose errors the caller has.
func Validate(run *v1alpha1.BenchmarkRun, workloadChecked bool) error {
	var errs field.ErrorList
	var other []error
	root := field.NewPath("spec")

	if run.APIVersion != v1alpha1.GroupVersion.String() {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), run.APIVersion,
			"must be "+v1alpha1.GroupVersion.String()+"; set apiVersion: "+v1alpha1.GroupVersion.String()))
	}
	if run.Kind != "BenchmarkRun" {
		errs = append(errs, field.Invalid(field.NewPath("kind"), run.Kind, "must be BenchmarkRun; set kind: BenchmarkRun"))
	}
	name := field.NewPath("metadata", "name")
	switch {
	case run.Name == "":
		errs = append(errs, field.Required(name, "name the run (it names the results directory results/<name>), or set metadata.generateName"))
	case len(run.Name) > 40:
		errs = append(errs, field.TooLong(name, run.Name, 40))
	default:
		for _, msg := range validation.IsDNS1123Subdomain(run.Name) {
			errs = append(errs, field.Invalid(name, run.Name, msg))
		}
	}

	s := run.Spec
	switch s.System {
	case v1alpha1.SystemKafka, v1alpha1.SystemPulsar:
	case "":
		errs = append(errs, field.Required(root.Child("system"), "set system: kafka or system: pulsar"))
	default:
		errs = append(errs, field.NotSupported(root.Child("system"), s.System, []v1alpha1.System{v1alpha1.SystemKafka, v1alpha1.SystemPulsar}))
	}

	// The durability first: its replicas bound the cluster size.
	d := s.DurabilityOrDefault()
	replicas := durability.DefaultReplicas
	if d.Replication != nil && d.Replication.Replicas > 0 {
		replicas = d.Replication.Replicas
	}
	if s.System == v1alpha1.SystemKafka || s.System == v1alpha1.SystemPulsar {
		if _, err := durability.Translate(s.System, d); err != nil {
			other = append(other, err)
		}
	}

	errs = append(errs, validateCluster(s, replicas, root.Child("cluster"))...)
	errs = append(errs, validateDriver(s, root.Child("driver"))...)
	if s.Payload != nil && s.Workload.PayloadFile == "" {
		// The CRD's rule; locally spec.payload is not read (payloadFile is
		// on disk), but a run file should mean the same in both places.
		errs = append(errs, field.Invalid(root.Child("payload"), s.Payload.ConfigMapRef.Name,
			"gives the bytes of spec.workload.payloadFile, which is not set; set payloadFile or remove spec.payload"))
	}

	if s.Workers.Count < 1 {
		errs = append(errs, field.Invalid(root.Child("workers", "count"), s.Workers.Count, "must be at least 1: the number of workers"))
	}
	switch s.Teardown.Policy {
	case v1alpha1.TeardownAlways, v1alpha1.TeardownOnSuccess, v1alpha1.TeardownNever:
	default:
		errs = append(errs, field.NotSupported(root.Child("teardown", "policy"), s.Teardown.Policy,
			[]v1alpha1.TeardownPolicy{v1alpha1.TeardownAlways, v1alpha1.TeardownOnSuccess, v1alpha1.TeardownNever}))
	}
	if t := s.Teardown.TTLSecondsAfterFinished; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(root.Child("teardown", "ttlSecondsAfterFinished"), *t, "must be at least 0"))
	}
	if t := s.Timeouts.Provisioning; t != nil && t.Duration <= 0 {
		errs = append(errs, field.Invalid(root.Child("timeouts", "provisioning"), t.Duration.String(), "must be positive, e.g. 20m"))
	}
	if t := s.Timeouts.Run; t != nil && t.Duration <= 0 {
		errs = append(errs, field.Invalid(root.Child("timeouts", "run"), t.Duration.String(), "must be positive, e.g. 30m; remove it for warm-up + test duration + 10m"))
	}
	if !workloadChecked {
		// Callers that built the run in Go (not from a file) get the
		// workload checked here.
		errs = append(errs, workload.Validate(s.Workload, root.Child("workload"))...)
		errs = append(errs, workload.CheckPayloadFile(s.Workload, root.Child("workload"))...)
	}
	if agg := errs.ToAggregate(); agg != nil {
		for _, e := range agg.Errors() {
			other = append(other, e)
		}
	}
	return errors.Join(other...)
}

// refusedBrokerKeys and refusedBookieKeys carry the durability; the CRD
// refuses them in brokerConfig and bookieConfig so status.durability stays
// true (ManagedCluster's CEL rules).
var (
	refusedBrokerKeys = []string{"min.insync.replicas", "default.replication.factor", "unclean.leader.election.enable",
		"log.flush.interval.messages", "log.flush.interval.ms", "log.flush.scheduler.interval.ms",
		"managedLedgerDefaultEnsembleSize", "managedLedgerDefaultWriteQuorum", "managedLedgerDefaultAckQuorum"}
	refusedBookieKeys = []string{"journalWriteData", "journalSyncData", "journalMaxGroupWaitMSec", "journalPageCacheFlushIntervalMSec"}
	// KafkaDriver's CEL rules.
	refusedTopicKeys = []string{"min.insync.replicas", "flush.messages", "flush.ms", "unclean.leader.election.enable"}
)

func validateCluster(s v1alpha1.BenchmarkRunSpec, replicas int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	c := s.Cluster
	if (c.Managed == nil) == (c.Existing == nil) {
		return append(errs, field.Invalid(p, "", "set exactly one of managed (start brokers for this run) or existing (use running brokers)"))
	}
	kafka, pulsar := s.System == v1alpha1.SystemKafka, s.System == v1alpha1.SystemPulsar
	if m := c.Managed; m != nil {
		mp := p.Child("managed")
		if m.Brokers < 1 {
			errs = append(errs, field.Invalid(mp.Child("brokers"), m.Brokers, "must be at least 1"))
		}
		if m.Bookies < 0 {
			errs = append(errs, field.Invalid(mp.Child("bookies"), m.Bookies, "must be at least 1; remove it for the default (3)"))
		}
		if m.MetadataStoreReplicas < 0 {
			errs = append(errs, field.Invalid(mp.Child("metadataStoreReplicas"), m.MetadataStoreReplicas, "must be at least 1; remove it for the default (3)"))
		}
		if kafka && (m.Bookies != 0 || m.MetadataStoreReplicas != 0) {
			errs = append(errs, field.Forbidden(mp, "bookies and metadataStoreReplicas apply to system pulsar only; remove them for kafka"))
		}
		if kafka && m.Brokers >= 1 && m.Brokers < replicas {
			errs = append(errs, field.Invalid(mp.Child("brokers"), m.Brokers,
				fmt.Sprintf("must be at least the replication factor (spec.durability.replication.replicas, 3 for a level): %d; add brokers or lower replicas", replicas)))
		}
		if bookies := cmpOr(m.Bookies, 3); pulsar && bookies >= 1 && bookies < replicas {
			errs = append(errs, field.Invalid(mp.Child("bookies"), bookies,
				fmt.Sprintf("must be at least the ensemble size (spec.durability.replication.replicas, 3 for a level): %d; add bookies or lower replicas", replicas)))
		}
		for _, k := range refusedBrokerKeys {
			if _, ok := m.BrokerConfig[k]; ok {
				errs = append(errs, field.Forbidden(mp.Child("brokerConfig").Key(k), "carries the durability; remove it and set spec.durability instead"))
			}
		}
		for _, k := range refusedBookieKeys {
			if _, ok := m.BookieConfig[k]; ok {
				errs = append(errs, field.Forbidden(mp.Child("bookieConfig").Key(k), "is a journal key set by the durability; remove it and set spec.durability instead"))
			}
		}
	}
	if e := c.Existing; e != nil {
		ep := p.Child("existing")
		switch {
		case kafka:
			if (e.BootstrapServers != "") == (e.StrimziCluster != nil) {
				errs = append(errs, field.Invalid(ep, "", "system kafka needs exactly one of bootstrapServers or strimziCluster; locally, set bootstrapServers: host:port"))
			} else if e.StrimziCluster != nil {
				errs = append(errs, field.Forbidden(ep.Child("strimziCluster"),
					"names a Strimzi Kafka inside a Kubernetes cluster, which local mode cannot read; set bootstrapServers: host:port instead (or run it on the cluster with kubectl apply)"))
			}
			if e.ServiceURL != "" || e.AdminURL != "" {
				errs = append(errs, field.Forbidden(ep, "serviceURL and adminURL apply to system pulsar only; use bootstrapServers for kafka"))
			}
		case pulsar:
			if e.ServiceURL == "" || e.AdminURL == "" {
				errs = append(errs, field.Required(ep, "system pulsar needs both serviceURL (pulsar://host:6650) and adminURL (http://host:8080)"))
			}
			if e.BootstrapServers != "" || e.StrimziCluster != nil {
				errs = append(errs, field.Forbidden(ep, "bootstrapServers and strimziCluster apply to system kafka only; use serviceURL and adminURL for pulsar"))
			}
		}
		if e.ServiceURL != "" && !strings.HasPrefix(e.ServiceURL, "pulsar://") && !strings.HasPrefix(e.ServiceURL, "pulsar+ssl://") {
			errs = append(errs, field.Invalid(ep.Child("serviceURL"), e.ServiceURL, "must start with pulsar:// or pulsar+ssl://, e.g. pulsar://localhost:6650"))
		}
		if e.AdminURL != "" && !strings.HasPrefix(e.AdminURL, "http://") && !strings.HasPrefix(e.AdminURL, "https://") {
			errs = append(errs, field.Invalid(ep.Child("adminURL"), e.AdminURL, "must start with http:// or https://, e.g. http://localhost:8080"))
		}
		if e.StrimziCluster != nil && e.StrimziCluster.Name == "" {
			errs = append(errs, field.Required(ep.Child("strimziCluster", "name"), "name the Strimzi Kafka resource"))
		}
	}
	return errs
}

func validateDriver(s v1alpha1.BenchmarkRunSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	d := s.Driver
	if d == nil {
		return nil
	}
	if d.Kafka != nil && s.System == v1alpha1.SystemPulsar {
		errs = append(errs, field.Forbidden(p.Child("kafka"), "is set but spec.system is pulsar; move the settings to spec.driver.pulsar"))
	}
	if d.Pulsar != nil && s.System == v1alpha1.SystemKafka {
		errs = append(errs, field.Forbidden(p.Child("pulsar"), "is set but spec.system is kafka; move the settings to spec.driver.kafka"))
	}
	if k := d.Kafka; k != nil {
		if _, ok := k.Producer["acks"]; ok {
			errs = append(errs, field.Forbidden(p.Child("kafka", "producer").Key("acks"), "is set by spec.durability; remove it and choose the durability level instead"))
		}
		for _, key := range refusedTopicKeys {
			if _, ok := k.Topic[key]; ok {
				errs = append(errs, field.Forbidden(p.Child("kafka", "topic").Key(key), "is set by spec.durability; remove it and choose the durability level instead"))
			}
		}
	}
	return errs
}

func cmpOr(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}
