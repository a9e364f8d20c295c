package pulsar

import (
	"context"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func record(name, namespace string, version int, status release.Status, labels map[string]string) *release.Release {
	return &release.Release{Name: name, Namespace: namespace, Version: version, Info: &release.Info{Status: status}, Labels: labels}
}

// TestReleaseStore: the records of one release name in two namespaces,
// kept in one (the operator's), are two releases, each under its own key
// and label, and neither store reads, changes or deletes the other's.
func TestReleaseStore(t *testing.T) {
	cs := fake.NewClientset()
	secrets := cs.CoreV1().Secrets("streambench-system")
	a := storage.Init(newReleaseStore(secrets, "team-a", t.Logf))
	b := storage.Init(newReleaseStore(secrets, "team-b", t.Logf))

	owner := map[string]string{LabelOwner: "uid-a"}
	relA := record("run-pulsar", "team-a", 1, release.StatusDeployed, owner)
	if err := a.Create(relA); err != nil {
		t.Fatal(err)
	}
	if len(relA.Labels) != 1 {
		t.Errorf("Create changed the release's labels: %v", relA.Labels)
	}
	if err := b.Create(record("run-pulsar", "team-b", 1, release.StatusDeployed, map[string]string{LabelOwner: "uid-b"})); err != nil {
		t.Fatalf("the same release name in another namespace: %v", err)
	}

	s, err := secrets.Get(context.Background(), "sh.helm.release.v1.team-a.run-pulsar.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the record of team-a's release under the store's key: %v", err)
	}
	for k, want := range map[string]string{"owner": "helm", "name": "run-pulsar", "version": "1", "status": "deployed", LabelOwner: "uid-a", LabelReleaseNamespace: "team-a"} {
		if s.Labels[k] != want {
			t.Errorf("record label %s = %q, want %q", k, s.Labels[k], want)
		}
	}
	if got := RecordName("team-a", "run-pulsar", 1); got != s.Name {
		t.Errorf("RecordName = %q, want the Secret's name %q", got, s.Name)
	}

	last, err := a.Last("run-pulsar")
	if err != nil || last.Namespace != "team-a" || last.Labels[LabelOwner] != "uid-a" {
		t.Fatalf("team-a's Last = %+v, %v; want its own record", last, err)
	}
	last, err = b.Last("run-pulsar")
	if err != nil || last.Namespace != "team-b" || last.Labels[LabelOwner] != "uid-b" {
		t.Fatalf("team-b's Last = %+v, %v; want its own record", last, err)
	}

	// Helm's uninstall: the history, then a record deleted by its key.
	h, err := a.History("run-pulsar")
	if err != nil || len(h) != 1 {
		t.Fatalf("team-a's History = %d records, %v; want 1", len(h), err)
	}
	if _, err := a.Delete("run-pulsar", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Last("run-pulsar"); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("team-a's Last after Delete: %v, want ErrReleaseNotFound", err)
	}
	if last, err := b.Last("run-pulsar"); err != nil || last.Namespace != "team-b" {
		t.Errorf("team-b's record after team-a's was deleted: %+v, %v", last, err)
	}
	all, err := b.ListReleases()
	if err != nil || len(all) != 1 || all[0].Namespace != "team-b" {
		t.Errorf("team-b's ListReleases = %v, %v; want its record only", all, err)
	}
}

// TestReleaseStoreRefusesMislabelled: a record in the operator's
// namespace labelled for one namespace but holding a release of another
// (put there by hand, since the store never writes one) is neither read
// nor deleted.
func TestReleaseStoreRefusesMislabelled(t *testing.T) {
	secrets := fake.NewClientset().CoreV1().Secrets("streambench-system")
	// Written through team-a's store, but the release says victim.
	a := newReleaseStore(secrets, "team-a", t.Logf)
	if err := a.Create("sh.helm.release.v1.run-pulsar.v1", record("run-pulsar", "victim", 1, release.StatusDeployed, nil)); err != nil {
		t.Fatal(err)
	}
	st := storage.Init(a)
	if _, err := st.Last("run-pulsar"); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("Last of a record whose release is in another namespace: %v, want ErrReleaseNotFound", err)
	}
	if _, err := st.Get("run-pulsar", 1); err == nil {
		t.Error("Get read a record whose release is in another namespace")
	}
	if _, err := st.Delete("run-pulsar", 1); err == nil {
		t.Error("Delete removed a record whose release is in another namespace")
	}
	if _, err := secrets.Get(context.Background(), RecordName("team-a", "run-pulsar", 1), metav1.GetOptions{}); err != nil {
		t.Errorf("the mislabelled record is gone: %v", err)
	}
}
