package probe

import (
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/storageclass"
)

// StaticProvisioner is storageclass.StaticProvisioner: a class whose
// volumes are made beforehand, one per disk.
const StaticProvisioner = storageclass.StaticProvisioner

// The annotations that make a StorageClass the cluster's default
// (storageclass.AnnotationDefault, AnnotationDefaultBeta).
const (
	AnnotationDefaultClass     = storageclass.AnnotationDefault
	AnnotationDefaultClassBeta = storageclass.AnnotationDefaultBeta
)

// Plan is what a run's testbed probes: the volumes each probe Job claims,
// with their classes resolved, and what it leaves out.
type Plan struct {
	// Volumes are the volumes each probe Job writes to; none means no
	// probe Job at all.
	Volumes []Volume
	// Note says what is not probed and why, for status.testbed.note;
	// empty when everything is.
	Note string
}

// Probes says whether any probe Job runs.
func (p Plan) Probes() bool { return len(p.Volumes) > 0 }

// NoteProbeOff is the note of a run whose spec switched the probe off.
const NoteProbeOff = "not probed: spec.testbed.probe is false, so no node's disks, CPU or memory were measured"

// PlanFor decides what a run's probe may claim, given the cluster's
// StorageClasses. A broker node's probe claims only a class known to
// provision a volume on demand. A static class (StaticProvisioner), a
// class that does not exist, or no class at all (none named and no
// default) can only bind a volume made beforehand: on a broker node that
// is a disk the brokers were given or a spare one, and the probe would
// either wait for a disk that never comes (the Job's whole deadline, then
// "not measured") or take the spare for good. Those volumes are left out,
// and the note says why.
func PlanFor(run *v1alpha1.BenchmarkRun, classes []storagev1.StorageClass) Plan {
	if !run.Spec.Testbed.ProbeOrDefault() {
		return Plan{Note: NoteProbeOff}
	}
	vols := Volumes(run)
	if run.Spec.Cluster.Managed == nil {
		return Plan{Volumes: vols} // an emptyDir on a worker node: nothing claimed
	}
	byName := map[string]*storagev1.StorageClass{}
	for i := range classes {
		byName[classes[i].Name] = &classes[i]
	}
	def := DefaultClass(classes)
	owner := "broker's"
	if run.Spec.System == v1alpha1.SystemPulsar {
		owner = "bookie's"
	}

	var out Plan
	var reasons []string             // in the order of the volumes
	skipped := map[string][]string{} // reason -> the volumes it leaves out
	for _, v := range vols {
		why, class := classVerdict(className(v.StorageClassName), byName, def, owner)
		if why == "" {
			v.StorageClassName = &class
			out.Volumes = append(out.Volumes, v)
			continue
		}
		if skipped[why] == nil {
			reasons = append(reasons, why)
		}
		skipped[why] = append(skipped[why], v.Name)
	}
	var notes []string
	for _, why := range reasons {
		what := strings.Join(skipped[why], " and ")
		if len(out.Volumes) == 0 && len(reasons) == 1 {
			what = "storage"
		}
		notes = append(notes, what+" not probed: "+why)
	}
	out.Note = strings.Join(notes, "; ")
	return out
}

// classVerdict says why a volume of the named class (empty: the default)
// must not be claimed, or, when it may, the class a claim should name: the
// default's own name, so that the claim gets the class just judged even if
// the default changes, and status.testbed names it.
func classVerdict(name string, byName map[string]*storagev1.StorageClass, def *storagev1.StorageClass, owner string) (why, class string) {
	sc, which := byName[name], "class "+name
	switch {
	case name == "" && def == nil:
		return fmt.Sprintf("no storageClassName is set and the cluster has no default StorageClass (annotation %s), "+
			"so a claim could bind only a volume made beforehand, maybe a %s disk", AnnotationDefaultClass, owner), ""
	case name == "":
		sc, which = def, "the default class "+def.Name
	case sc == nil:
		return fmt.Sprintf("StorageClass %s does not exist, so a claim of it could bind only a volume made beforehand, maybe a %s disk", name, owner), ""
	}
	if sc.Provisioner == StaticProvisioner {
		return fmt.Sprintf("%s has static volumes (%s), each one a %s disk; the probe would take one", which, StaticProvisioner, owner), ""
	}
	return "", sc.Name
}

// DefaultClass is the class a claim that names none gets
// (storageclass.Default); nil when none is.
func DefaultClass(classes []storagev1.StorageClass) *storagev1.StorageClass {
	return storageclass.Default(classes)
}
