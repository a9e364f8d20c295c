package strimzi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// testCRDDir holds the minimal Strimzi CRDs the envtest suite installs.
var testCRDDir = filepath.Join("..", "..", "..", "config", "test", "strimzi")

// TestTestCRDs checks the minimal CRDs against what the builders produce
// and Ready reads: group, the only version v1, kind, namespaced scope, the
// status subresource (so a test playing Strimzi can write status with the
// status client), and specs and statuses kept whole. It also runs the API
// server's own CRD validation, so a CRD that the envtest API server would
// refuse fails here first.
func TestTestCRDs(t *testing.T) {
	run := newRun()
	kafka, err := Kafka(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	pools, err := NodePools(run)
	if err != nil {
		t.Fatal(err)
	}
	user, err := KafkaUser(newRun(withSecurity(true, v1alpha1.ManagedAuthScramSHA512)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file, plural string
		built        *unstructured.Unstructured
	}{
		{"kafka.strimzi.io_kafkas.yaml", "kafkas", kafka},
		{"kafka.strimzi.io_kafkanodepools.yaml", "kafkanodepools", pools[0]},
		{"kafka.strimzi.io_kafkausers.yaml", "kafkausers", user},
		// The cluster operator's, which the operator reads only.
		{"core.strimzi.io_strimzipodsets.yaml", "strimzipodsets", podSet()},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testCRDDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(data, &crd); err != nil {
				t.Fatalf("not a CustomResourceDefinition: %v", err)
			}
			gvk := tc.built.GroupVersionKind()
			if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
				t.Errorf("apiVersion/kind %s/%s, want apiextensions.k8s.io/v1 CustomResourceDefinition", crd.APIVersion, crd.Kind)
			}
			if want := tc.plural + "." + tc.built.GroupVersionKind().Group; crd.Name != want {
				t.Errorf("metadata.name %q, want %q", crd.Name, want)
			}
			if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind || crd.Spec.Names.Plural != tc.plural {
				t.Errorf("group %q kind %q plural %q, the builder makes %s (plural %s)", crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Names.Plural, gvk, tc.plural)
			}
			if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("scope %q, want Namespaced", crd.Spec.Scope)
			}
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("%d versions, want only %s (Strimzi 1.x serves no other)", len(crd.Spec.Versions), Version)
			}
			v := crd.Spec.Versions[0]
			if v.Name != gvk.Version || !v.Served || !v.Storage {
				t.Errorf("version %q served=%v storage=%v, want %s served and stored", v.Name, v.Served, v.Storage, gvk.Version)
			}
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("no status subresource")
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Fatalf("no schema")
			}
			for _, field := range []string{"spec", "status"} {
				p, ok := v.Schema.OpenAPIV3Schema.Properties[field]
				if !ok || p.Type != "object" || p.XPreserveUnknownFields == nil || !*p.XPreserveUnknownFields {
					t.Errorf("%s: want an object with x-kubernetes-preserve-unknown-fields: true, got %+v", field, p)
				}
			}

			// What the API server checks on create.
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
			var internal apiextensions.CustomResourceDefinition
			if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
				t.Errorf("the API server would refuse the CRD: %v", errs.ToAggregate())
			}
		})
	}
}

// podSet is a StrimziPodSet as the operator reads one (PodSetGVK).
func podSet() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(PodSetGVK)
	return u
}
