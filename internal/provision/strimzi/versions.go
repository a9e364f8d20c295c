package strimzi

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// KafkaImagesEnv is the environment variable of Strimzi's cluster operator
// that maps each Kafka version it deploys to that version's image, one
// VERSION=IMAGE a line in Strimzi's install files and Helm chart
// ("4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1"). Strimzi refuses a
// Kafka whose spec.kafka.version it does not list there, and deploys its
// default, the newest it supports, when none is given.
const KafkaImagesEnv = "STRIMZI_KAFKA_IMAGES"

// KafkaVersions are the Kafka versions one Strimzi cluster operator
// deploys, oldest first.
type KafkaVersions []string

// ParseKafkaImages reads the versions of a STRIMZI_KAFKA_IMAGES value.
// Entries are split as Strimzi's own Util.parseMap splits them (at
// newlines, blanks and commas), so blank lines, the indentation of a YAML
// block and "a=x, b=y" on one line all read as Strimzi reads them; a
// version listed twice counts once (Strimzi keeps the last image). The
// versions come back sorted by their numbers, not as strings: 4.10.0 is
// newer than 4.9.0. An entry that is not VERSION=IMAGE, or whose version
// is not dotted numbers, is an error naming its line: Strimzi itself
// fails to start on the first, and the second is nothing a Kafka's
// spec.kafka.version could name.
func ParseKafkaImages(value string) (KafkaVersions, error) {
	var (
		out  KafkaVersions
		errs []error
	)
	for i, line := range strings.Split(value, "\n") {
		for _, entry := range strings.FieldsFunc(line, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == '\r'
		}) {
			version, image, ok := strings.Cut(entry, "=")
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%s line %d: %q is not VERSION=IMAGE (e.g. 4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1)", KafkaImagesEnv, i+1, entry))
			case image == "":
				errs = append(errs, fmt.Errorf("%s line %d: %q names no image after the =", KafkaImagesEnv, i+1, entry))
			case versionParts(version) == nil:
				errs = append(errs, fmt.Errorf("%s line %d: %q is not a Kafka version (dotted numbers, e.g. 4.3.1)", KafkaImagesEnv, i+1, version))
			case !slices.Contains(out, version):
				out = append(out, version)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no Kafka version", KafkaImagesEnv)
	}
	slices.SortFunc(out, compareKafkaVersions)
	return out, nil
}

// Newest is the newest version: Strimzi's default for a Kafka that names
// none.
func (v KafkaVersions) Newest() string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// Supports reports whether version is one of v, as Strimzi matches a
// Kafka's spec.kafka.version: exactly ("4.3" is not "4.3.0").
func (v KafkaVersions) Supports(version string) bool {
	return slices.Contains(v, version)
}

// String lists the versions as a message shows them: "4.2.0, 4.2.1".
func (v KafkaVersions) String() string { return strings.Join(v, ", ") }

// compareKafkaVersions orders two dotted versions by their numbers, part
// by part (a missing part is 0); a version that is not dotted numbers
// sorts before every one that is, and such versions among themselves as
// strings.
func compareKafkaVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	switch {
	case pa == nil && pb == nil:
		return strings.Compare(a, b)
	case pa == nil:
		return -1
	case pb == nil:
		return 1
	}
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// versionParts are the numbers of a dotted version ("4.3.1": 4, 3, 1), or
// nil when it is not one.
func versionParts(v string) []int {
	fields := strings.Split(v, ".")
	if len(fields) < 2 {
		return nil
	}
	parts := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || f != strconv.Itoa(n) {
			return nil
		}
		parts[i] = n
	}
	return parts
}

// Reasons of a managed Kafka run's BrokerVersionResolved condition: how
// ChooseKafkaVersion chose.
const (
	// ReasonNewestSupported: no version pinned; the newest the installed
	// Strimzi supports, its default.
	ReasonNewestSupported = "NewestSupported"
	// ReasonPinned: spec.cluster.managed.version, which Strimzi supports.
	ReasonPinned = "Pinned"
	// ReasonPinnedNotChecked: spec.cluster.managed.version; no Strimzi
	// cluster operator was found to check it against.
	ReasonPinnedNotChecked = "PinnedNotChecked"
	// ReasonOperatorNotFound: no version pinned and no Strimzi cluster
	// operator found; DefaultKafkaVersion is assumed.
	ReasonOperatorNotFound = "StrimziOperatorNotFound"
	// ReasonUnsupportedVersion: spec.cluster.managed.version is not one
	// Strimzi supports; the run fails before anything is deployed.
	ReasonUnsupportedVersion = "UnsupportedKafkaVersion"
)

// KafkaVersionChoice is the Kafka version of a managed run: the one its
// durability is stated for (status.durability.brokerVersion) and, when
// Named, the one its Kafka names in spec.kafka.version.
type KafkaVersionChoice struct {
	Version string
	// Named: the Kafka names Version, so Strimzi deploys that version or
	// refuses the Kafka; either way the durability is stated for the
	// brokers that run. Strimzi's default is not left to Strimzi even when
	// it is the version chosen: an operator whose STRIMZI_KAFKA_IMAGES was
	// trimmed still has its own default compiled in. False only when no
	// version is pinned and no cluster operator was found: Version is
	// then DefaultKafkaVersion, assumed, and the Kafka leaves the version
	// to whatever Strimzi runs, as before streambench read it.
	Named bool
	// Reason and Message are the BrokerVersionResolved condition's.
	Reason, Message string
}

// ChooseKafkaVersion decides the Kafka version of a managed Kafka run from
// spec.cluster.managed.version and the Strimzi cluster operators found
// (ClusterOperators for the run's namespace; the first is the one that
// deploys the run's Kafka). With none, notFound says why (nothing runs
// one, or the role does not let streambench see it), and the run goes on
// as before: a pinned version is taken unchecked, else DefaultKafkaVersion
// is assumed. A pinned version the operator does not list is an error
// naming spec.cluster.managed.version, the versions it does list and the
// fix: Strimzi would refuse the Kafka only after everything else was
// deployed.
func ChooseKafkaVersion(run *v1alpha1.BenchmarkRun, ops []Operator, notFound string) (KafkaVersionChoice, error) {
	m, err := managed(run)
	if err != nil {
		return KafkaVersionChoice{}, err
	}
	pinned := m.Version
	if len(ops) > 0 && ops[0].Err != nil {
		notFound = fmt.Sprintf("the versions of Strimzi's cluster operator %s cannot be read: %v", ops[0], ops[0].Err)
		ops = nil
	}
	if len(ops) == 0 {
		if pinned != "" {
			return KafkaVersionChoice{Version: pinned, Named: true, Reason: ReasonPinnedNotChecked,
				Message: fmt.Sprintf("Kafka %s as spec.cluster.managed.version asks, not checked against the versions Strimzi supports: %s", pinned, notFound)}, nil
		}
		return KafkaVersionChoice{Version: DefaultKafkaVersion, Reason: ReasonOperatorNotFound,
			Message: fmt.Sprintf("Kafka %s assumed (the default of Strimzi %s, whose rules streambench follows): %s; "+
				"the Kafka leaves the version to the installed Strimzi, whose default may be another, and status.durability.brokerVersion would then not be the brokers'; "+
				"set spec.cluster.managed.version to name the version", DefaultKafkaVersion, StrimziVersion, notFound)}, nil
	}
	op := ops[0]
	where := "Strimzi in namespace " + op.Namespace
	if op.Name != ClusterOperatorName {
		where += " (Deployment " + op.Name + ")"
	}
	which := whichOperator(ops, run.Namespace)
	switch {
	case pinned == "":
		return KafkaVersionChoice{Version: op.Versions.Newest(), Named: true, Reason: ReasonNewestSupported,
			Message: fmt.Sprintf("Kafka %s, the newest that %s supports (%s)%s", op.Versions.Newest(), where, op.Versions, which)}, nil
	case op.Versions.Supports(pinned):
		return KafkaVersionChoice{Version: pinned, Named: true, Reason: ReasonPinned,
			Message: fmt.Sprintf("Kafka %s as spec.cluster.managed.version asks, which %s supports (%s)%s", pinned, where, op.Versions, which)}, nil
	}
	return KafkaVersionChoice{Reason: ReasonUnsupportedVersion}, fmt.Errorf(
		"spec.cluster.managed.version %s is not a Kafka version that %s deploys: it supports %s (%s of its cluster operator)%s; "+
			"set spec.cluster.managed.version to one of them, or remove it for the newest (%s)",
		pinned, where, op.Versions, KafkaImagesEnv, which, op.Versions.Newest())
}

// whichOperator says, when there are several cluster operators, why the
// first was taken ("" for one).
func whichOperator(ops []Operator, namespace string) string {
	if len(ops) < 2 {
		return ""
	}
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.String()
	}
	why := "it comes first by namespace and name"
	switch first, second := ops[0], ops[1]; {
	case first.Watches && !second.Watches:
		why = "it is the one that watches namespace " + namespace
	case first.Name == ClusterOperatorName && second.Name != ClusterOperatorName:
		why = "it is the one named " + ClusterOperatorName
	}
	return fmt.Sprintf("; of the %d Strimzi cluster operators (%s), %s was read: %s", len(ops), strings.Join(names, ", "), ops[0], why)
}

// KafkaVersionOf is the version the run's Kafka names in
// spec.kafka.version: spec.cluster.managed.version, or, when that is
// empty, the version the controller chose from the installed Strimzi and
// recorded (status.durability.brokerVersion, with the BrokerVersionResolved
// condition True), so the brokers run the version the durability is
// stated for. Empty leaves the version to Strimzi's default: no cluster
// operator was found, or the run has no status (a suite's host run).
func KafkaVersionOf(run *v1alpha1.BenchmarkRun) string {
	m := run.Spec.Cluster.Managed
	if m == nil || run.Spec.System != v1alpha1.SystemKafka {
		return ""
	}
	if m.Version != "" {
		return m.Version
	}
	if d := run.Status.Durability; d != nil && meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionBrokerVersionResolved) {
		return d.BrokerVersion
	}
	return ""
}
