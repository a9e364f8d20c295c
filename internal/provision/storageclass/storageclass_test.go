package storageclass

import (
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefault(t *testing.T) {
	class := func(name string, created int64, annotation string) storagev1.StorageClass {
		c := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(created, 0))}}
		if annotation != "" {
			c.Annotations = map[string]string{annotation: "true"}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		classes []storagev1.StorageClass
		want    string
	}{
		{"none", nil, ""},
		{"none marked", []storagev1.StorageClass{class("a", 1, "")}, ""},
		{"the marked one", []storagev1.StorageClass{class("a", 1, ""), class("b", 1, AnnotationDefault)}, "b"},
		{"the beta annotation counts", []storagev1.StorageClass{class("a", 1, AnnotationDefaultBeta)}, "a"},
		{"of several, the newest", []storagev1.StorageClass{class("new", 2, AnnotationDefault), class("old", 1, AnnotationDefault)}, "new"},
		{"of several as new, the first by name", []storagev1.StorageClass{class("z", 1, AnnotationDefault), class("m", 1, AnnotationDefault)}, "m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := Default(tc.classes); c != nil {
				got = c.Name
			}
			if got != tc.want {
				t.Errorf("Default = %q, want %q", got, tc.want)
			}
		})
	}
}
