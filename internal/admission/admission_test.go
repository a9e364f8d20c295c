package admission

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/config/crd"
	"github.com/streambench/streambench-operator/internal/durability"
)

// TestEmbeddedCRDsAreValid runs the API server's own checks of a CRD on
// the embedded ones (schema, CEL cost budget): admitting objects with a
// CRD the API server would not install would prove nothing.
func TestEmbeddedCRDsAreValid(t *testing.T) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil || len(files) != 2 {
		t.Fatalf("embedded CRDs: %v %v", files, err)
	}
	for _, f := range files {
		data, err := fs.ReadFile(crd.Bases, f)
		if err != nil {
			t.Fatal(err)
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&c)
		var internal apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&c, &internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			t.Errorf("%s: the API server would refuse the CRD: %v", f, errs.ToAggregate())
		}
	}
}

// TestGoDefaultsAreTheCRDs: the constants Go code uses where no API
// server defaulted the object are the CRD's own defaults.
func TestGoDefaultsAreTheCRDs(t *testing.T) {
	k := BenchmarkRun()
	for path, want := range map[string]string{
		"spec.cluster.managed.brokers":               itoa(v1alpha1.DefaultBrokers),
		"spec.durability.replication.replicas":       itoa(durability.DefaultReplicas),
		"spec.durability.replication.ackReplicas":    itoa(durability.DefaultAckReplicas),
		"spec.timeouts.provisioning":                 `"` + strings.TrimSuffix(v1alpha1.DefaultProvisioningTimeout.String(), "0s") + `"`,
		"spec.cluster.managed.storage.deleteClaim":   "true",
		"spec.cluster.managed.bookies":               "",
		"spec.cluster.managed.metadataStoreReplicas": "",
	} {
		if got := k.DefaultOf(path); got != want {
			t.Errorf("%s: the CRD defaults %q, Go %q", path, got, want)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestCRDRefusesTheDurabilityKeys: the CRD's CEL rules refuse exactly the
// keys internal/durability says the durability owns, in every place a spec
// could set them; another key in the same place is accepted.
func TestCRDRefusesTheDurabilityKeys(t *testing.T) {
	const run = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: keys}\nspec:\n  system: %s\n  cluster: {managed: {%s}}\n  workload: {messageSize: 1024}\n%s"
	places := []struct {
		field, system string
		keys          []string
		doc           func(key string) string
	}{
		{"spec.cluster.managed.brokerConfig", "kafka", durability.RefusedBrokerConfigKeys,
			func(k string) string { return fmt.Sprintf(run, "kafka", "brokerConfig: {'"+k+"': '1'}", "") }},
		{"spec.cluster.managed.bookieConfig", "pulsar", durability.RefusedBookieConfigKeys,
			func(k string) string { return fmt.Sprintf(run, "pulsar", "bookieConfig: {'"+k+"': '1'}", "") }},
		{"spec.driver.kafka.producer", "kafka", durability.RefusedKafkaProducerKeys,
			func(k string) string {
				return fmt.Sprintf(run, "kafka", "", "  driver: {kafka: {producer: {'"+k+"': '1'}}}\n")
			}},
		{"spec.driver.kafka.topic", "kafka", durability.RefusedKafkaTopicKeys,
			func(k string) string {
				return fmt.Sprintf(run, "kafka", "", "  driver: {kafka: {topic: {'"+k+"': '1'}}}\n")
			}},
	}
	admit := func(doc string) error {
		obj, err := Decode([]byte(doc))
		if err != nil {
			t.Fatalf("test input: %v", err)
		}
		return BenchmarkRun().Create(obj).ToAggregate()
	}
	for _, p := range places {
		for _, k := range p.keys {
			if err := admit(p.doc(k)); err == nil || !strings.Contains(err.Error(), p.field) {
				t.Errorf("%s[%s]: want refused naming %s, got %v", p.field, k, p.field, err)
			}
		}
		if err := admit(p.doc("a.key.the.durability.does.not.own")); err != nil {
			t.Errorf("%s: another key is refused: %v", p.field, err)
		}
	}
}
