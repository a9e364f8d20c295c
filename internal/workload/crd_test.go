package workload

// These tests hold the Go code to the generated CRD, the source of truth in
// a cluster. The CRD is read from config/crd/bases (make manifests writes
// it); its defaults, OpenAPI validation and CEL rules are applied with the
// API server's own code (k8s.io/apiextensions-apiserver: structural
// defaulting, the OpenAPI schema validator and the CEL validator), the same
// functions kube-apiserver runs on a create, so no API server process is
// needed to compare local mode with it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

var crdPath = filepath.Join("..", "..", "config", "crd", "bases", "streambench.io_benchmarkruns.yaml")

// workloadCRDSchema returns spec.workload's schema from the generated CRD.
func workloadCRDSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatalf("reading the generated CRD (run make manifests): %v", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("decoding %s: %v", crdPath, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != v1alpha1.GroupVersion.Version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			t.Fatalf("%s: version %s has no schema", crdPath, v.Name)
		}
		w, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["workload"]
		if !ok {
			t.Fatalf("%s: no spec.properties.workload", crdPath)
		}
		return w
	}
	t.Fatalf("%s: no version %s", crdPath, v1alpha1.GroupVersion.Version)
	return apiextensionsv1.JSONSchemaProps{}
}

// TestCRDDefaultsMatch compares every default: under
// spec.properties.workload.properties with what Default sets, and checks
// that Default sets nothing the CRD does not default.
func TestCRDDefaultsMatch(t *testing.T) {
	s := workloadCRDSchema(t)

	// Every object field present, so nested defaults are filled too.
	empty := v1alpha1.WorkloadSpec{Mixed: &v1alpha1.MixedWorkload{}}
	defaulted := empty
	defaulted.Mixed = &v1alpha1.MixedWorkload{}
	Default(&defaulted)

	before, after := toMap(t, empty), toMap(t, defaulted)
	checked := 0
	var walk func(path string, props map[string]apiextensionsv1.JSONSchemaProps, before, after map[string]any)
	walk = func(path string, props map[string]apiextensionsv1.JSONSchemaProps, before, after map[string]any) {
		for _, name := range sortedKeys(after) {
			if _, ok := props[name]; !ok {
				t.Errorf("%s%s: Go field has no CRD property", path, name)
			}
		}
		for _, name := range sortedKeys(props) {
			p := props[name]
			if p.Default != nil {
				var want any
				if err := json.Unmarshal(p.Default.Raw, &want); err != nil {
					t.Fatalf("%s%s: default %s: %v", path, name, p.Default.Raw, err)
				}
				got, ok := after[name]
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%s%s: CRD default %s, Default() gives %v (set: %t)", path, name, p.Default.Raw, got, ok)
				}
				checked++
			} else if !reflect.DeepEqual(before[name], after[name]) && p.Type != "object" {
				t.Errorf("%s%s: Default() sets %v but the CRD has no default", path, name, after[name])
			}
			if p.Type == "object" {
				b, _ := before[name].(map[string]any)
				a, _ := after[name].(map[string]any)
				walk(path+name+".", p.Properties, b, a)
			}
		}
	}
	walk("spec.workload.", s.Properties, before, after)
	// Guards against a CRD that lost its markers.
	if checked < 10 {
		t.Fatalf("only %d defaults in the CRD's workload schema; expected the 11 of workload_types.go", checked)
	}
}

// apiServer applies the CRD to a workload as kube-apiserver does on create:
// prune nulls, default, OpenAPI validation, then CEL (skipped after a type
// error, as the API server does).
type apiServer struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	v1s := workloadCRDSchema(t)
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1s, &internal, nil); err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatalf("structural schema: %v", err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatalf("schema validator: %v", err)
	}
	cv := cel.NewValidator(ss, false, celconfig.PerCallLimit)
	if cv == nil {
		t.Fatal("the CRD's workload schema has no CEL rules; expected the three of workload_types.go")
	}
	return &apiServer{structural: ss, validator: v, cel: cv}
}

// admit returns the defaulted object, or the errors that reject it.
func (a *apiServer) admit(t *testing.T, doc string) (map[string]any, field.ErrorList) {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("test input is not YAML: %v", err)
	}
	var obj map[string]any
	// As the API server decodes: integers become int64, others float64.
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		t.Fatalf("test input is not an object: %v", err)
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, a.structural)
	structuraldefaulting.Default(obj, a.structural)
	path := field.NewPath("spec", "workload")
	errs := apiservervalidation.ValidateCustomResource(path, obj, a.validator)
	if len(errs) == 0 {
		celErrs, _ := a.cel.Validate(context.Background(), path, a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return obj, errs
}

// local is what local mode does: Parse, Default, Validate.
func local(doc string) (v1alpha1.WorkloadSpec, error) {
	w, err := Parse([]byte(doc))
	if err != nil {
		return w, err
	}
	Default(&w)
	if errs := Validate(w, field.NewPath("spec", "workload")); len(errs) > 0 {
		return w, errs.ToAggregate()
	}
	return w, nil
}

// TestCRDAgreesWithLocalMode feeds the same workload documents to the API
// server's admission code and to Parse+Default+Validate: both must accept or
// both reject, and an accepted workload must come out with the same
// defaults. Unknown and duplicate keys are left out: the API server handles
// them by its field-validation setting (kubectl: Strict, an error), not by
// the schema.
func TestCRDAgreesWithLocalMode(t *testing.T) {
	api := newAPIServer(t)
	docs := agreementCases(t, workloadCRDSchema(t))
	accepted := 0
	for _, doc := range docs {
		obj, apiErrs := api.admit(t, doc)
		w, localErr := local(doc)
		name := strings.ReplaceAll(strings.TrimSpace(doc), "\n", "; ")
		switch {
		case len(apiErrs) == 0 && localErr != nil:
			t.Errorf("[%s]\n  API server accepts, local mode rejects: %v", name, localErr)
		case len(apiErrs) > 0 && localErr == nil:
			t.Errorf("[%s]\n  API server rejects (%v), local mode accepts", name, apiErrs.ToAggregate())
		case len(apiErrs) == 0:
			accepted++
			// What the controller would decode from the stored object.
			js, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var fromAPI v1alpha1.WorkloadSpec
			if err := json.Unmarshal(js, &fromAPI); err != nil {
				t.Errorf("[%s]\n  the API server's object %s does not decode: %v", name, js, err)
				continue
			}
			if !reflect.DeepEqual(fromAPI, w) {
				t.Errorf("[%s]\n  API server defaults to %s\n  local mode defaults to %s", name, dump(fromAPI), dump(w))
			}
		}
	}
	// Both sides of the table must be exercised for the comparison to mean
	// anything.
	if accepted < 50 || len(docs)-accepted < 50 {
		t.Fatalf("%d of %d cases accepted; the table should hold many of each", accepted, len(docs))
	}
	t.Logf("%d workloads compared, %d accepted by both, %d rejected by both", len(docs), accepted, len(docs)-accepted)
}

// agreementCases are workload documents: the stock files; for every
// property of the CRD's workload schema, values at and beyond its bounds,
// each enum value and a wrong one, zero, empty and null (derived from the
// schema, so a new field is covered without editing this table); wrong
// types; and every combination of the fields the CEL rules read.
func agreementCases(t *testing.T, s apiextensionsv1.JSONSchemaProps) []string {
	var docs []string
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("stock workloads: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}

	// A valid base (mixed, so nested fields are reachable) that each
	// single-field case overrides.
	base := map[string]string{
		"messageSize":           "1024",
		"producerRate":          "1000",
		"consumerBacklogSizeGB": "1",
		"mixed":                 "{}",
	}
	// rateSearch needs producerRate 0, which a backlog cannot have: its
	// fields are tried on a max-rate base, so their bounds are reached.
	maxRateBase := map[string]string{"messageSize": "1024", "producerRate": "0"}
	withField := func(path []string, value string) string {
		var b strings.Builder
		on := base
		if path[0] == "rateSearch" {
			on = maxRateBase
		}
		for _, k := range sortedKeys(on) {
			if k == path[0] {
				continue
			}
			fmt.Fprintf(&b, "%s: %s\n", k, on[k])
		}
		if len(path) == 1 {
			fmt.Fprintf(&b, "%s: %s\n", path[0], value)
		} else {
			fmt.Fprintf(&b, "%s:\n  %s: %s\n", path[0], path[1], value)
		}
		return b.String()
	}
	covered := 0
	var walk func(prefix []string, props map[string]apiextensionsv1.JSONSchemaProps)
	walk = func(prefix []string, props map[string]apiextensionsv1.JSONSchemaProps) {
		for _, name := range sortedKeys(props) {
			p := props[name]
			path := append(append([]string{}, prefix...), name)
			if p.Type == "object" {
				walk(path, p.Properties)
				continue
			}
			for _, v := range edgeValues(p) {
				docs = append(docs, withField(path, v))
			}
			covered++
		}
	}
	walk(nil, s.Properties)
	if want := countLeaves(specSchema); covered != want {
		t.Fatalf("the CRD's workload schema has %d scalar properties, v1alpha1.WorkloadSpec %d; regenerate the CRD (make manifests)", covered, want)
	}

	// Wrong types and number spellings.
	for _, d := range []string{
		withField([]string{"topics"}, `"1"`), withField([]string{"topics"}, "[1]"),
		withField([]string{"producerRate"}, "5000000000"), withField([]string{"producerRate"}, "1e6"),
		withField([]string{"topics"}, "2.0"), withField([]string{"topics"}, "2147483648"),
		withField([]string{"testDurationMinutes"}, `"5m"`), withField([]string{"randomBytesRatio"}, `"0.5"`),
		withField([]string{"name"}, "5"), withField([]string{"name"}, "true"),
		withField([]string{"useRandomizedPayloads"}, `"true"`), withField([]string{"keyDistributor"}, "1"),
		withField([]string{"mixed"}, "true"), withField([]string{"mixed", "catchUpSubscriptionsPerTopic"}, `"1"`),
		"producerRate: 1000\n", // messageSize missing
		// JSON keeps number spellings that YAML would have normalized.
		`{"messageSize": 1.0}`, `{"messageSize": 1, "producerRate": 1e6}`, `{"messageSize": 1, "topics": 2E0}`,
	} {
		docs = append(docs, d)
	}

	// The fields the CEL rules read, in every combination.
	for _, backlog := range []string{"", "consumerBacklogSizeGB: 0\n", "consumerBacklogSizeGB: 0.5\n", "consumerBacklogSizeGB: null\n"} {
		for _, rate := range []string{"", "producerRate: 0\n", "producerRate: 1000\n"} {
			for _, mixed := range []string{"", "mixed: {}\n", "mixed: null\n"} {
				for _, payload := range []string{"", "payloadFile: p.data\n", "payloadFile: \"\"\n"} {
					for _, random := range []string{"", "useRandomizedPayloads: false\n", "useRandomizedPayloads: true\n"} {
						docs = append(docs, "messageSize: 1\n"+backlog+rate+mixed+payload+random)
					}
				}
			}
		}
	}
	for _, rate := range []string{"", "producerRate: 0\n", "producerRate: 1000\n"} {
		for _, rs := range []string{"rateSearch: {}\n", "rateSearch: null\n", "rateSearch: {holdSeconds: 3}\n", "rateSearch: {maxP99LatencyMs: 50}\n"} {
			docs = append(docs, "messageSize: 1\n"+rate+rs)
		}
	}
	return docs
}

func countLeaves(s *schema) int {
	n := 0
	for _, f := range s.fields {
		if f.nested != nil {
			n += countLeaves(f.nested)
		} else {
			n++
		}
	}
	return n
}

// edgeValues are YAML values around a property's bounds.
func edgeValues(p apiextensionsv1.JSONSchemaProps) []string {
	vals := []string{"null"}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch p.Type {
	case "integer":
		vals = append(vals, "0", "1", "-1", "1000")
		if p.Minimum != nil {
			m := *p.Minimum
			vals = append(vals, num(m-1), num(m), num(m+1))
		}
		if p.Maximum != nil {
			m := *p.Maximum
			vals = append(vals, num(m-1), num(m), num(m+1))
		}
	case "number":
		vals = append(vals, "0", "1", "-1", "0.5", "1000")
		if p.Minimum != nil {
			m := *p.Minimum
			vals = append(vals, num(m-0.001), num(m), num(m+0.001))
		}
		if p.Maximum != nil {
			m := *p.Maximum
			vals = append(vals, num(m-0.001), num(m), num(m+0.001))
		}
	case "string":
		vals = append(vals, `""`, "x")
		for _, e := range p.Enum {
			vals = append(vals, string(e.Raw))
		}
		if len(p.Enum) > 0 {
			vals = append(vals, "NOT_AN_ENUM_VALUE", `"no_key"`)
		}
	case "boolean":
		vals = append(vals, "true", "false")
	}
	return vals
}

func toMap(t *testing.T, w v1alpha1.WorkloadSpec) map[string]any {
	t.Helper()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
