package pulsar

import (
	"fmt"
	"maps"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// LabelReleaseNamespace is the label of a release record with the
// namespace its release is installed in: the records of every run live in
// one namespace, the operator's, so the record of run-a in team-a and the
// record of run-a in team-b (the same release name, ReleaseName) are told
// apart by it.
const LabelReleaseNamespace = "streambench.io/release-namespace"

// releaseStore is Helm's Secrets driver over the operator's namespace,
// seen by one release namespace: the releases installed there, and no
// other.
//
// Helm keeps a release's records (its manifest, hooks and values) in the
// namespace it installs into by default. There a tenant who may write
// Secrets can forge one, and the uninstall would run the forged record's
// hooks and delete every object of its manifest with the operator's
// rights (issue #58). In the operator's namespace only the operator
// writes.
//
// Helm names a record sh.helm.release.v1.<release>.v<revision> and finds
// a release's records by the labels name=<release>,owner=helm; the
// driver's custom labels are the release's Labels (Create, Update). So
// the store puts the release namespace into the key after Helm's prefix
// (sh.helm.release.v1.<namespace>.<release>.v<revision>: a namespace
// holds no dot, so no two pairs give one key), adds LabelReleaseNamespace
// to what it writes and to every query, and drops a record whose decoded
// release names another namespace.
//
// Records an operator before issue #58 left in a run's namespace are
// never read: a tenant could have written them. An operator upgraded
// while a managed Pulsar run was deployed therefore does not find that
// run's release and leaves its objects where they are; the tenant removes
// them (helm uninstall in their namespace, with their own rights).
type releaseStore struct {
	secrets *driver.Secrets
	// namespace is the release namespace: the run's.
	namespace string
}

var _ driver.Driver = (*releaseStore)(nil)

// newReleaseStore returns the store of the releases of namespace, kept as
// Secrets by secrets (a client of the operator's namespace).
func newReleaseStore(secrets corev1client.SecretInterface, namespace string, log func(string, ...any)) *releaseStore {
	d := driver.NewSecrets(secrets)
	d.Log = log
	return &releaseStore{secrets: d, namespace: namespace}
}

// recordPrefix is how Helm's storage begins a record's key.
const recordPrefix = storage.HelmStorageType + "."

// RecordName is the name of the Secret that holds revision of release
// installed in namespace, in the operator's namespace.
func RecordName(namespace, release string, revision int) string {
	return fmt.Sprintf("%s%s.%s.v%d", recordPrefix, namespace, release, revision)
}

// key turns Helm's key (sh.helm.release.v1.<release>.v<revision>) into
// the store's.
func (s *releaseStore) key(helmKey string) string {
	return recordPrefix + s.namespace + "." + strings.TrimPrefix(helmKey, recordPrefix)
}

// Name is the Secrets driver's ("Secret"); Helm's actions do not read it.
func (s *releaseStore) Name() string { return s.secrets.Name() }

// ours says whether a record read back is of the store's namespace:
// labelled so, and its release installed there.
func (s *releaseStore) ours(rls *release.Release) bool {
	return rls != nil && rls.Labels[LabelReleaseNamespace] == s.namespace && rls.Namespace == s.namespace
}

func (s *releaseStore) Get(key string) (*release.Release, error) {
	rls, err := s.secrets.Get(s.key(key))
	if err != nil {
		return nil, err
	}
	if !s.ours(rls) {
		// Only the operator writes here, and it labels what it writes:
		// such a record was put there by hand.
		return nil, fmt.Errorf("release record %s is not of a release in namespace %s (label %s=%q, release namespace %q): remove the Secret from the operator's namespace", s.key(key), s.namespace, LabelReleaseNamespace, rls.Labels[LabelReleaseNamespace], rls.Namespace)
	}
	return rls, nil
}

func (s *releaseStore) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	return s.secrets.List(func(rls *release.Release) bool { return s.ours(rls) && filter(rls) })
}

func (s *releaseStore) Query(labels map[string]string) ([]*release.Release, error) {
	q := maps.Clone(labels)
	if q == nil {
		q = map[string]string{}
	}
	q[LabelReleaseNamespace] = s.namespace
	found, err := s.secrets.Query(q)
	if err != nil {
		return nil, err
	}
	var out []*release.Release
	for _, rls := range found {
		if s.ours(rls) {
			out = append(out, rls)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

func (s *releaseStore) Create(key string, rls *release.Release) error {
	return s.secrets.Create(s.key(key), s.labelled(rls))
}

func (s *releaseStore) Update(key string, rls *release.Release) error {
	return s.secrets.Update(s.key(key), s.labelled(rls))
}

func (s *releaseStore) Delete(key string) (*release.Release, error) {
	// Read through Get first, so that a record of another namespace is
	// refused rather than deleted.
	if _, err := s.Get(key); err != nil {
		return nil, err
	}
	return s.secrets.Delete(s.key(key))
}

// labelled is a shallow copy of rls with LabelReleaseNamespace among its
// labels (the driver writes a release's Labels onto its Secret); rls and
// its labels stay as they are.
func (s *releaseStore) labelled(rls *release.Release) *release.Release {
	cp := *rls
	cp.Labels = maps.Clone(rls.Labels)
	if cp.Labels == nil {
		cp.Labels = map[string]string{}
	}
	cp.Labels[LabelReleaseNamespace] = s.namespace
	return &cp
}
