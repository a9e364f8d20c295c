package strimzi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// upstream holds Strimzi's own install files, unchanged (testdata/upstream,
// pinned by its SHA256SUMS).
var upstream = filepath.Join("..", "..", "..", "testdata", "upstream")

// TestBuiltObjectsFitStrimzisSchemas checks the secured Kafka and the
// KafkaUser against the v1 schemas of Strimzi's real CRDs, those of the
// release README names and the local cluster builds (1.2.0), as its API
// server would take them: nothing pruned (a field
// name Strimzi does not know would be dropped silently, and the brokers
// would run without it) and nothing refused.
func TestBuiltObjectsFitStrimzisSchemas(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, sec := range []*v1alpha1.ManagedSecurity{
		nil,
		{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512},
		{TLS: true, Authentication: v1alpha1.ManagedAuthTLS},
		{Authentication: v1alpha1.ManagedAuthScramSHA512},
	} {
		run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Security = sec })
		kafka, err := Kafka(run, translate(t, run))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, kafka)
		if user, err := KafkaUser(run); err != nil {
			t.Fatal(err)
		} else if user != nil {
			objs = append(objs, user)
		}
		pools, err := NodePools(run)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, pools...)
	}
	files := map[string]string{KindKafka: "040-Crd-kafka.yaml", KindKafkaUser: "044-Crd-kafkauser.yaml", KindKafkaNodePool: "045-Crd-kafkanodepool.yaml"}
	for _, release := range []string{"1.2.0"} {
		read := func(t *testing.T, file string) []byte {
			b, err := os.ReadFile(filepath.Join(upstream, "strimzi-"+release, file))
			if err != nil {
				t.Fatalf("Strimzi %s's install files (testdata/upstream): %v", release, err)
			}
			return b
		}
		t.Run(release, func(t *testing.T) {
			schemas := map[string]*v1Schema{}
			for kind, file := range files {
				schemas[kind] = newV1Schema(t, read(t, file))
			}
			for _, obj := range objs {
				s := schemas[obj.GetKind()]
				got := obj.DeepCopy().Object
				structuralpruning.Prune(got, s.structural, true)
				if diff := cmp.Diff(obj.Object, got); diff != "" {
					t.Errorf("%s %s: Strimzi %s's schema prunes fields (-built +kept):\n%s", obj.GetKind(), obj.GetName(), release, diff)
				}
				if errs := apiservervalidation.ValidateCustomResource(field.NewPath(""), obj.Object, s.validator); len(errs) > 0 {
					t.Errorf("%s %s: Strimzi %s's schema refuses it: %v", obj.GetKind(), obj.GetName(), release, errs.ToAggregate())
				}
			}
		})
	}
}

type v1Schema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// newV1Schema is the served v1 version's schema of a CRD file.
func newV1Schema(t *testing.T, data []byte) *v1Schema {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != Version || !v.Served {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			t.Fatal(err)
		}
		ss, err := structuralschema.NewStructural(&internal)
		if err != nil {
			t.Fatalf("%s: structural schema: %v", crd.Name, err)
		}
		val, _, err := apiservervalidation.NewSchemaValidator(&internal)
		if err != nil {
			t.Fatalf("%s: schema validator: %v", crd.Name, err)
		}
		return &v1Schema{structural: ss, validator: val}
	}
	t.Fatalf("%s serves no %s", crd.Name, Version)
	return nil
}
