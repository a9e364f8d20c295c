package workers

import (
	"strings"
	"testing"
)

// A run may name the operator's own worker image or one of the admin's
// entries (exact, or a prefix ending in '*'); any other image is refused
// naming the field, the image and who can allow it.
func TestImagePolicyCheck(t *testing.T) {
	const operators = "ghcr.io/streambench/streambench:0.2.0"
	for _, tc := range []struct {
		name    string
		allowed []string
		image   string // spec.workers.image; "" the operator's
		// wantErr are substrings of the refusal; nil: allowed.
		wantErr []string
	}{
		{name: "no image named: the operator's", image: ""},
		{name: "the operator's own image, named", image: operators},
		{name: "any other image, with no allow-list", image: "evil.example/steal:1",
			wantErr: []string{"spec.workers.image: image evil.example/steal:1 is not allowed by this operator",
				"its own worker image " + operators + " and those on its allow-list (none)",
				"remove spec.workers.image to run " + operators,
				"ask the operator's admin to add evil.example/steal:1 to the chart's allowedWorkerImages (manager flag --allowed-worker-images)"}},
		{name: "an exact entry", allowed: []string{"registry.example/streambench:dev"}, image: "registry.example/streambench:dev"},
		{name: "an exact entry is not a prefix", allowed: []string{"registry.example/streambench:dev"}, image: "registry.example/streambench:dev2",
			wantErr: []string{"image registry.example/streambench:dev2 is not allowed", "allow-list (registry.example/streambench:dev)"}},
		{name: "another tag of the operator's repository is not the operator's image", image: "ghcr.io/streambench/streambench:latest",
			wantErr: []string{"image ghcr.io/streambench/streambench:latest is not allowed"}},
		{name: "a prefix entry takes every tag of its repository", allowed: []string{"registry.example/streambench:*"}, image: "registry.example/streambench:pr-58"},
		{name: "a prefix entry takes a digest too", allowed: []string{"registry.example/streambench:*"}, image: "registry.example/streambench:1@sha256:0123"},
		{name: "a prefix entry ends where it says: not another repository", allowed: []string{"registry.example/streambench:*"}, image: "registry.example/streambench-evil:1",
			wantErr: []string{"image registry.example/streambench-evil:1 is not allowed", "allow-list (registry.example/streambench:*)"}},
		{name: "a registry prefix", allowed: []string{"a.example/x:1", "registry.example/team/*"}, image: "registry.example/team/bench:2"},
		{name: "'*' alone allows every image", allowed: []string{"*"}, image: "anything.example/at-all:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run("kafka")
			r.Spec.Workers.Image = tc.image
			err := ImagePolicy{Default: operators, Allowed: tc.allowed}.Check(r)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed %s, want refused", tc.image)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal\n%s\nmisses %q", err, w)
				}
			}
		})
	}
}

// The admin's entries are checked when the manager starts, so a typo
// fails there, not as every run refused.
func TestAllowedImages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		want    []string
		wantErr string
	}{
		{name: "none", entries: nil, want: []string{}},
		{name: "exact and prefix, spaces dropped", entries: []string{"a.example/x:1", " b.example/y:* "}, want: []string{"a.example/x:1", "b.example/y:*"}},
		{name: "every image", entries: []string{"*"}, want: []string{"*"}},
		{name: "an empty entry (a trailing comma)", entries: []string{"a.example/x:1", ""}, wantErr: "entry 2 is empty"},
		{name: "a '*' inside", entries: []string{"a.example/*/x:1"}, wantErr: "entry 1 (a.example/*/x:1) has a '*' before its end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AllowedImages(tc.entries)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || len(got) != len(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Every image field of the spec that reaches a pod is checked:
// spec.workers.image, the only one (RunImages says why the others are
// not the run's to choose).
func TestRunImages(t *testing.T) {
	r := run("kafka")
	if got := RunImages(r); len(got) != 0 {
		t.Errorf("a run naming no image: %v", got)
	}
	r.Spec.Workers.Image = "x.example/y:1"
	got := RunImages(r)
	if len(got) != 1 || got[0] != (ImageField{Field: "spec.workers.image", Image: "x.example/y:1"}) {
		t.Errorf("RunImages = %v", got)
	}
	// The image the Jobs get is the one RunImages names.
	if img := WorkerJob(r, "default:1").Spec.Template.Spec.Containers[0].Image; img != got[0].Image {
		t.Errorf("the worker Job runs %s, RunImages names %s", img, got[0].Image)
	}
}
