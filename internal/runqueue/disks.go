package runqueue

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/nodefit"
	"github.com/streambench/streambench-operator/internal/provision/probe"
)

// Short is one StorageClass of static volumes that has fewer Available
// volumes than the run claims, while some wait to be freed.
type Short struct {
	Class string
	// Need is how many volumes of the class the run's brokers claim;
	// Available how many of the class are Available now.
	Need, Available int
	// ToFree are the volumes of the class that a claim cannot bind until
	// they are wiped and freed: Released (reclaimPolicy Retain) or Failed
	// (Delete, which a static volume has no deleter for), and Bound ones
	// whose claim belongs to a finished run (its claims being deleted).
	ToFree []string
	// LeftBy names the runs (or, for a run that is gone, the claims) that
	// left them.
	LeftBy []string
}

// DiskWait is what Disks found: empty when the run's claims can bind.
type DiskWait []Short

// Waiting reports whether the run must wait for disks.
func (d DiskWait) Waiting() bool { return len(d) > 0 }

// Message names the volumes to free and how (README, "the node pools";
// hack/free-local-disks.sh).
func (d DiskWait) Message() string {
	parts := make([]string, len(d))
	for i, s := range d {
		parts[i] = fmt.Sprintf("the brokers claim %d PersistentVolume(s) of class %s and %d are Available; %s of class %s must be freed first (left by %s): wipe and free them with the README's disk recipe, hack/free-local-disks.sh %s",
			s.Need, s.Class, s.Available, nodefit.Names(s.ToFree), s.Class, nodefit.Names(s.LeftBy), s.Class)
	}
	return "waiting for disks: " + strings.Join(parts, "; ")
}

// Disks says whether the run's broker claims would find their static
// volumes taken: for each StorageClass of static volumes
// (probe.StaticProvisioner) the run claims from, fewer volumes Available
// than it claims, and some of the class waiting to be freed. Such a run
// would otherwise be deployed and wait out its provisioning deadline with
// claims Pending (a Retain volume stays Released after the last run's
// claims are deleted; README). A class with a provisioner makes volumes on
// demand and never waits here, nor does a class that does not exist or a
// claim with no class and no default (the claims say so themselves), nor
// a class merely too small (freeing would not help; the deadline says so).
//
// Counting the whole class is an upper bound: a local volume also belongs
// to one node, which may be outside the run's placement, so a run may
// still find too few; it never waits for disks it does not need.
//
// runs attribute a volume to the run that left it: Strimzi names a claim
// after the Kafka, the Pulsar chart after the release, and both are named
// after the run (a long or odd run name is cut and hashed; its claims are
// then named as they are).
func Disks(run *v1alpha1.BenchmarkRun, classes []storagev1.StorageClass, pvs []corev1.PersistentVolume, runs []v1alpha1.BenchmarkRun) DiskWait {
	need := Claims(run, classes)
	if len(need) == 0 {
		return nil
	}
	static := map[string]bool{}
	for _, c := range classes {
		if c.Provisioner == probe.StaticProvisioner {
			static[c.Name] = true
		}
	}
	var out DiskWait
	for _, class := range sortedKeys(need) {
		if !static[class] {
			continue
		}
		s := Short{Class: class, Need: need[class]}
		leftBy := map[string]bool{}
		for _, pv := range pvs {
			if pv.Spec.StorageClassName != class {
				continue
			}
			switch pv.Status.Phase {
			case corev1.VolumeAvailable:
				s.Available++
				continue
			case corev1.VolumeReleased, corev1.VolumeFailed:
			case corev1.VolumeBound:
				if owner := claimOwner(pv.Spec.ClaimRef, runs); owner == nil || !owner.Status.Phase.Finished() {
					continue
				}
			default:
				continue
			}
			s.ToFree = append(s.ToFree, fmt.Sprintf("%s (%s)", pv.Name, pv.Status.Phase))
			leftBy[leftByName(pv.Spec.ClaimRef, runs)] = true
		}
		if s.Available >= s.Need || len(s.ToFree) == 0 {
			continue
		}
		sort.Strings(s.ToFree)
		for who := range leftBy {
			s.LeftBy = append(s.LeftBy, who)
		}
		sort.Strings(s.LeftBy)
		out = append(out, s)
	}
	return out
}

// Claims counts the volumes the run's brokers claim per StorageClass, a
// claim without one counted under the default class (none: not counted).
// Kafka: per broker, data and each additional log directory (which takes
// data's class unless it names one, as the node pool does). Pulsar: per
// bookie, journal and ledgers; per ZooKeeper node, its data volume.
func Claims(run *v1alpha1.BenchmarkRun, classes []storagev1.StorageClass) map[string]int {
	m := run.Spec.Cluster.Managed
	if m == nil {
		return nil
	}
	def := ""
	if c := probe.DefaultClass(classes); c != nil {
		def = c.Name
	}
	out := map[string]int{}
	add := func(class *string, n int32, fallback string) {
		name := fallback
		if class != nil {
			name = *class
		}
		if name == "" {
			name = def
		}
		if name != "" && n > 0 {
			out[name] += int(n)
		}
	}
	if run.Spec.System == v1alpha1.SystemPulsar {
		add(m.Storage.Journal.StorageClassName, m.BookiesOrDefault(), "")
		add(m.Storage.Ledgers.StorageClassName, m.BookiesOrDefault(), "")
		add(m.Storage.MetadataStore.StorageClassName, m.MetadataStoreReplicasOrDefault(), "")
		return out
	}
	data := ""
	if m.Storage.Data.StorageClassName != nil {
		data = *m.Storage.Data.StorageClassName
	}
	add(m.Storage.Data.StorageClassName, m.BrokersOrDefault(), "")
	for _, extra := range m.Storage.AdditionalData {
		add(extra.StorageClassName, m.BrokersOrDefault(), data)
	}
	return out
}

// claimOwner is the run whose brokers made the claim: in the claim's
// namespace, the run with the longest name the claim's name contains
// (run-a must not take run-ab's claims).
func claimOwner(ref *corev1.ObjectReference, runs []v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	if ref == nil {
		return nil
	}
	var best *v1alpha1.BenchmarkRun
	for i := range runs {
		r := &runs[i]
		if r.Namespace != ref.Namespace || r.Spec.Cluster.Managed == nil || !strings.Contains(ref.Name, r.Name) {
			continue
		}
		if best == nil || len(r.Name) > len(best.Name) {
			best = r
		}
	}
	return best
}

func leftByName(ref *corev1.ObjectReference, runs []v1alpha1.BenchmarkRun) string {
	if owner := claimOwner(ref, runs); owner != nil {
		return "run " + RefOf(owner).String()
	}
	if ref != nil {
		return "claim " + ref.Namespace + "/" + ref.Name
	}
	return "no claim"
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
