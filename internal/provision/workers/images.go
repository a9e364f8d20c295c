package workers

import (
	"fmt"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ImagePolicy is which images the operator puts into the pods it creates
// for a run that names an image of its own (issue 58). The coordinator and
// the workers mount the Secret keys the run names and hold the run's
// token: an image the run's author chose could send them anywhere. So a
// run may name only the operator's own worker image or one its admin
// allowed.
type ImagePolicy struct {
	// Default is the operator's worker image (--worker-image), always
	// allowed: a run that names no image gets it.
	Default string
	// Allowed are the admin's entries (--allowed-worker-images, the
	// chart's allowedWorkerImages; AllowedImages checks them): an image
	// reference as a run writes it, matched exactly, or a prefix ending in
	// '*' ("registry.example/streambench:*" for every tag of one
	// repository); "*" alone allows every image.
	Allowed []string
}

// AllowedImages checks the admin's entries of the allow-list: none may be
// empty, and '*' may only end one. Spaces around an entry are dropped
// (a list written "a, b").
func AllowedImages(entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for i, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			return nil, fmt.Errorf("entry %d is empty; give image references separated by commas, e.g. registry.example/streambench:0.2.0,registry.example/streambench-dev:*", i+1)
		case strings.Contains(strings.TrimSuffix(e, "*"), "*"):
			return nil, fmt.Errorf("entry %d (%s) has a '*' before its end; '*' may only end an entry, as a prefix: e.g. registry.example/streambench:*", i+1, e)
		}
		out = append(out, e)
	}
	return out, nil
}

// Allows says whether image may run in a run's pods.
func (p ImagePolicy) Allows(image string) bool {
	if image == p.Default {
		return true
	}
	for _, a := range p.Allowed {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(image, prefix) {
				return true
			}
		} else if image == a {
			return true
		}
	}
	return false
}

// ImageField is an image a run's spec names, with the field that names
// it.
type ImageField struct {
	Field, Image string
}

// RunImages are the images a run's spec puts into pods the operator
// creates: spec.workers.image alone. The operator's other pods take no
// image from the spec: the testbed probes and the page-cache Jobs run
// Default; the Java probe runs the image of a broker pod the run's brokers
// own (controllers/phase_provisioning_java.go); the brokers' images are
// Strimzi's and the Pulsar chart's, whose repositories the spec cannot
// change (spec.cluster.managed.version picks a tag of them). A field added
// to the API that names an image belongs here.
func RunImages(run *v1alpha1.BenchmarkRun) []ImageField {
	if img := run.Spec.Workers.Image; img != "" {
		return []ImageField{{Field: "spec.workers.image", Image: img}}
	}
	return nil
}

// Check refuses a run whose spec names an image the policy does not
// allow, naming the field, the image and the fix.
func (p ImagePolicy) Check(run *v1alpha1.BenchmarkRun) error {
	for _, f := range RunImages(run) {
		if p.Allows(f.Image) {
			continue
		}
		list := "none"
		if len(p.Allowed) > 0 {
			list = strings.Join(p.Allowed, ", ")
		}
		return fmt.Errorf("%s: image %s is not allowed by this operator, which runs its own worker image %s and those on its allow-list (%s): the coordinator and the workers mount the Secrets the run names, so their image is the operator admin's choice; "+
			"remove %s to run %s, or ask the operator's admin to add %s to the chart's allowedWorkerImages (manager flag --allowed-worker-images)",
			f.Field, f.Image, p.Default, list, f.Field, p.Default, f.Image)
	}
	return nil
}
