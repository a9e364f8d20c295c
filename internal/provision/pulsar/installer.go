package pulsar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// DefaultOperationTimeout bounds one install or uninstall. Neither waits
// for pods (readiness is polled with Ready), so they take seconds; the
// bound is for an API server that stops answering.
const DefaultOperationTimeout = 5 * time.Minute

// Release is one Helm release of the Pulsar chart.
type Release struct {
	Name      string
	Namespace string
	Values    map[string]any
	// Affinity is merged into the bookie and broker pod templates after
	// rendering (see AffinityPostRenderer); nil leaves them as rendered.
	Affinity *corev1.Affinity
	// AuxiliaryAffinity is merged into the pod templates of ZooKeeper,
	// autorecovery and the init Jobs after rendering
	// (AuxiliaryAffinityPostRenderer); nil leaves them as rendered.
	AuxiliaryAffinity *corev1.Affinity
	// MonitorLabels are set on the chart's PodMonitors after rendering
	// (EnablePodMonitors); nil leaves them as rendered.
	MonitorLabels map[string]string
	// TLS leaves out the chart's cert-manager Certificate after rendering
	// (CertificateRenderer): the operator writes its Secret itself.
	TLS bool
	// Owner is the UID of the run the release is for, kept in the
	// release's labels (LabelOwner): a release of the same name that
	// another run, or a user, installed is never taken over or removed.
	Owner string
}

// LabelOwner is the release label with the UID of the run that installed it.
const LabelOwner = "streambench.io/run-uid"

// NotOwnedError is a release of the run's name that the run did not install.
type NotOwnedError struct {
	Namespace, Name, Owner string
}

func (e *NotOwnedError) Error() string {
	by := "not by streambench"
	if e.Owner != "" {
		by = "by another run (UID " + e.Owner + ")"
	}
	return fmt.Sprintf("Helm release %s/%s exists already and was installed %s; streambench neither uses nor removes it: rename the run, or uninstall that release if it is a leftover", e.Namespace, e.Name, by)
}

// ReleaseFor is the release of a managed Pulsar run: ReleaseName(run) in
// the run's namespace, with Values(run, eff), the run's placement
// affinity and its auxiliary components' (AuxiliaryPlacementOf).
func ReleaseFor(run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability) (Release, error) {
	vals, err := Values(run, eff)
	if err != nil {
		return Release{}, err
	}
	return Release{
		Name:              ReleaseName(run),
		Namespace:         run.Namespace,
		Values:            vals,
		Affinity:          run.Spec.Cluster.Managed.Placement.Affinity.DeepCopy(),
		AuxiliaryAffinity: AuxiliaryPlacementOf(run.Spec.Cluster.Managed).Affinity,
		TLS:               SecurityOf(run).TLS,
		Owner:             string(run.UID),
	}, nil
}

// Operation is what the Installer runs for a release.
type Operation string

const (
	OperationInstall   Operation = "install"
	OperationUninstall Operation = "uninstall"
)

// Result is the state of the last operation started for a release.
type Result struct {
	Operation Operation
	// Done is false while the operation runs.
	Done bool
	// Err is the operation's error once Done; nil means it succeeded.
	Err      error
	Started  time.Time
	Finished time.Time
}

// InstallerOptions configure an Installer. Zero values take defaults.
type InstallerOptions struct {
	// Chart is where the Pulsar chart comes from; the defaults are
	// DefaultRepoURL, DefaultChartName and DefaultChartVersion.
	Chart ChartSource
	// CacheDir holds the downloaded index and chart archives; it must be
	// writable. Default: streambench-helm in os.TempDir().
	CacheDir string
	// Timeout bounds one operation; default DefaultOperationTimeout.
	Timeout time.Duration
	// Log receives Helm's debug output; nil discards it.
	Log func(format string, args ...any)
	// StorageNamespace is where the release records are kept: the
	// operator's own namespace, which tenants cannot write
	// (releaseStore). Required: an Installer without it fails every
	// operation rather than keep the records where a tenant could forge
	// one.
	StorageNamespace string
}

// Installer runs Helm operations on Pulsar releases in the background, at
// most one at a time per release, so that Reconcile never blocks on Helm:
// it calls StartInstall or StartUninstall, requeues, and reads Result.
//
// Results live in memory. After an operator restart Result reports
// nothing, and the controller starts the operation again; both are
// idempotent (install leaves a deployed release alone, uninstall of a
// missing release only removes leftover PVCs).
type Installer struct {
	config  *rest.Config
	chart   *chartCache
	timeout time.Duration
	log     func(format string, args ...any)
	// storageNamespace holds the release records (InstallerOptions).
	storageNamespace string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex
	ops map[string]*Result
}

// NewInstaller returns an Installer that talks to the API server of
// config.
func NewInstaller(config *rest.Config, opts InstallerOptions) *Installer {
	src := opts.Chart.withDefaults()
	// A benchmark must be reproducible: the default repository's chart is
	// pinned rather than "whatever is newest today".
	if src.Version == "" && src.RepoURL == DefaultRepoURL && src.Name == DefaultChartName {
		src.Version = DefaultChartVersion
	}
	dir := opts.CacheDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "streambench-helm")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultOperationTimeout
	}
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Installer{
		config:           rest.CopyConfig(config),
		chart:            &chartCache{source: src, dir: dir},
		timeout:          timeout,
		log:              logf,
		storageNamespace: opts.StorageNamespace,
		ctx:              ctx,
		cancel:           cancel,
		ops:              map[string]*Result{},
	}
}

// Chart is the chart source the Installer installs.
func (i *Installer) Chart() ChartSource { return i.chart.source }

func key(namespace, name string) string { return namespace + "/" + name }

// StartInstall starts installing rel in the background and returns at
// once. It reports false, and starts nothing, while another operation on
// the release runs. A release that is already deployed is left as it is:
// the Installer never upgrades (the chart's init Jobs render on install
// only). A release left failed or half-installed by an earlier attempt is
// uninstalled first and installed again.
func (i *Installer) StartInstall(rel Release) bool {
	// The operation outlives the call: it gets its own copy of the values
	// (Helm may also change the map it is given while coalescing), in the
	// JSON form Helm uses for values read from files.
	vals, copyErr := toValue(rel.Values)
	rel.Values, _ = vals.(map[string]any)
	rel.Affinity = rel.Affinity.DeepCopy()
	rel.AuxiliaryAffinity = rel.AuxiliaryAffinity.DeepCopy()
	return i.start(rel.Namespace, rel.Name, OperationInstall, func(ctx context.Context) error {
		if copyErr != nil {
			return fmt.Errorf("values: %w", copyErr)
		}
		return i.install(ctx, rel)
	})
}

// StartUninstall starts uninstalling the release in the background and
// returns at once; false while another operation on it runs. With
// deleteClaims the release's PersistentVolumeClaims (those of its
// StatefulSets, which helm uninstall leaves behind) are deleted too.
func (i *Installer) StartUninstall(namespace, name string, deleteClaims bool) bool {
	return i.start(namespace, name, OperationUninstall, func(ctx context.Context) error {
		return i.uninstall(ctx, namespace, name, deleteClaims)
	})
}

// Result returns the last operation started for the release, and false
// when none was started (since the process started, or since Forget).
func (i *Installer) Result(namespace, name string) (Result, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	r, ok := i.ops[key(namespace, name)]
	if !ok {
		return Result{}, false
	}
	return *r, true
}

// Forget drops the finished result of the release, e.g. once the run is
// deleted. A running operation is not forgotten.
func (i *Installer) Forget(namespace, name string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if r, ok := i.ops[key(namespace, name)]; ok && r.Done {
		delete(i.ops, key(namespace, name))
	}
}

// Close cancels the running operations and waits for them to return.
func (i *Installer) Close() {
	i.cancel()
	i.wg.Wait()
}

func (i *Installer) start(namespace, name string, op Operation, fn func(context.Context) error) bool {
	k := key(namespace, name)
	i.mu.Lock()
	if r, ok := i.ops[k]; ok && !r.Done {
		i.mu.Unlock()
		return false
	}
	if i.ctx.Err() != nil {
		i.mu.Unlock()
		return false
	}
	res := &Result{Operation: op, Started: time.Now()}
	i.ops[k] = res
	i.wg.Add(1)
	i.mu.Unlock()

	go func() {
		defer i.wg.Done()
		ctx, cancel := context.WithTimeout(i.ctx, i.timeout)
		defer cancel()
		err := fn(ctx)
		if err != nil {
			err = fmt.Errorf("helm %s of release %s: %w", op, k, err)
		}
		i.mu.Lock()
		res.Done, res.Err, res.Finished = true, err, time.Now()
		i.mu.Unlock()
	}()
	return true
}

// ReleaseStatus is the status of a Helm release (deployed, failed,
// pending-install, ...), or "" when there is no release of that name.
type ReleaseStatus string

// Status reads the release's current status. It blocks no longer than
// ctx allows: Helm's storage calls take no context, so they run in a
// goroutine that is abandoned when ctx ends.
func (i *Installer) Status(ctx context.Context, namespace, name string) (ReleaseStatus, error) {
	type answer struct {
		status ReleaseStatus
		err    error
	}
	ch := make(chan answer, 1)
	go func() {
		st, err := i.status(namespace, name)
		ch <- answer{st, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case a := <-ch:
		return a.status, a.err
	}
}

// Owner reads the UID of the run that installed the release (its
// LabelOwner), and whether a release of that name exists.
func (i *Installer) Owner(ctx context.Context, namespace, name string) (owner string, exists bool, err error) {
	last, err := i.lastRelease(ctx, namespace, name)
	if err != nil || last == nil {
		return "", false, err
	}
	return last.Labels[LabelOwner], true, nil
}

// lastRelease reads the newest record of a release; nil when there is
// none. It blocks no longer than ctx allows: Helm's storage calls take no
// context, so they run in a goroutine that is abandoned when ctx ends.
func (i *Installer) lastRelease(ctx context.Context, namespace, name string) (*release.Release, error) {
	type answer struct {
		rel *release.Release
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		cfg, err := i.actionConfig(namespace)
		if err != nil {
			ch <- answer{err: err}
			return
		}
		last, err := cfg.Releases.Last(name)
		if errors.Is(err, driver.ErrReleaseNotFound) {
			ch <- answer{}
			return
		}
		ch <- answer{rel: last, err: err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case a := <-ch:
		return a.rel, a.err
	}
}

func (i *Installer) status(namespace, name string) (ReleaseStatus, error) {
	cfg, err := i.actionConfig(namespace)
	if err != nil {
		return "", err
	}
	last, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ReleaseStatus(last.Info.Status), nil
}

// actionConfig is a Helm configuration for one operation on a release in
// namespace: objects created there, the release records kept in the
// operator's namespace (releaseStore), not there, as Helm would.
func (i *Installer) actionConfig(namespace string) (*action.Configuration, error) {
	if i.storageNamespace == "" {
		return nil, errors.New("the Installer has no namespace for Helm's release records (InstallerOptions.StorageNamespace): give the manager --operator-namespace")
	}
	cs, err := kubernetes.NewForConfig(i.config)
	if err != nil {
		return nil, err
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(NewRESTClientGetter(i.config, namespace), namespace, "secret", i.log); err != nil {
		return nil, err
	}
	// Init's store would keep the records in namespace; it is replaced
	// before anything reads it (its Secrets client is made lazily).
	cfg.Releases = storage.Init(newReleaseStore(cs.CoreV1().Secrets(i.storageNamespace), namespace, i.log))
	cfg.Releases.Log = i.log
	// Belt and braces: the getter already reports namespace.
	if kc, ok := cfg.KubeClient.(*kube.Client); ok {
		kc.Namespace = namespace
	}
	return cfg, nil
}

func (i *Installer) install(ctx context.Context, rel Release) error {
	cfg, err := i.actionConfig(rel.Namespace)
	if err != nil {
		return err
	}
	last, err := cfg.Releases.Last(rel.Name)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
	case err != nil:
		return err
	case last.Labels[LabelOwner] != rel.Owner:
		return &NotOwnedError{Namespace: rel.Namespace, Name: rel.Name, Owner: last.Labels[LabelOwner]}
	case last.Info.Status == release.StatusDeployed:
		i.log("release %s/%s is already deployed; not upgrading", rel.Namespace, rel.Name)
		return nil
	default:
		// Failed, or left pending by a process that stopped mid-install:
		// an upgrade would not render the init Jobs, so start over.
		i.log("release %s/%s is %s; uninstalling it before a fresh install", rel.Namespace, rel.Name, last.Info.Status)
		if err := i.helmUninstall(cfg, rel.Namespace, rel.Name); err != nil {
			return fmt.Errorf("removing the %s release before installing again: %w", last.Info.Status, err)
		}
		if cfg, err = i.actionConfig(rel.Namespace); err != nil {
			return err
		}
	}

	ch, err := i.chart.load()
	if err != nil {
		return err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName = rel.Name
	install.Namespace = rel.Namespace
	if rel.Owner != "" {
		install.Labels = map[string]string{LabelOwner: rel.Owner}
	}
	// Never wait here: readiness is polled with Ready, and Wait would hold
	// this goroutine for the minutes the pods take.
	install.Wait = false
	install.DisableHooks = disableHooks
	install.Timeout = i.timeout
	install.PostRenderer = releaseRenderer(rel)
	_, err = install.RunWithContext(ctx, ch, rel.Values)
	return err
}

func (i *Installer) uninstall(ctx context.Context, namespace, name string, deleteClaims bool) error {
	cfg, err := i.actionConfig(namespace)
	if err != nil {
		return err
	}
	if err := i.helmUninstall(cfg, namespace, name); err != nil {
		return err
	}
	if !deleteClaims {
		return nil
	}
	return deleteReleaseClaims(ctx, i.config, namespace, name)
}

// disableHooks: the Installer runs no chart hook, on install or
// uninstall. With the values streambench gives, chart 4.7.0 renders
// pre-upgrade hooks only (the broker's and ZooKeeper's statefulset-cleanup
// Jobs, for releases of charts before 4.6.0), and the Installer never
// upgrades; its pre-install jwt-secret-init Job renders only with
// auth.authentication.jwt.generateSecrets, which stays off (the operator
// writes the token Secrets). TestChartHooks pins that. So no hook is
// needed, and the hooks a record holds are never created, whoever wrote
// the record.
const disableHooks = true

// helmUninstall uninstalls release name of namespace, once CheckManifest
// passes every stored revision of it: Helm deletes what the record's
// manifest lists, with the operator's rights, and the records, though
// only the operator writes them now, are checked as the rendered chart
// was (defence in depth).
func (i *Installer) helmUninstall(cfg *action.Configuration, namespace, name string) error {
	revisions, err := cfg.Releases.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return err
	}
	for _, r := range revisions {
		if err := CheckManifest(r.Manifest, namespace); err != nil {
			return fmt.Errorf("refusing to uninstall: the release record %s in namespace %s lists what streambench never installs for a run in %s: %w; "+
				"the operator did not render this record: inspect the Secret and delete it and the objects by hand",
				RecordName(namespace, name, r.Version), i.storageNamespace, namespace, err)
		}
	}
	u := action.NewUninstall(cfg)
	u.IgnoreNotFound = true
	u.DisableHooks = disableHooks
	u.Wait = false
	u.Timeout = i.timeout
	u.DeletionPropagation = "background"
	_, err = u.Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	return err
}

// ClaimSelector selects the PersistentVolumeClaims of a release's
// StatefulSets. The StatefulSet controller copies a StatefulSet's selector
// labels onto the claims it creates, and the chart's selectors carry
// app=<chart name> and release=<release>.
func ClaimSelector(release string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{"app": DefaultChartName, "release": release})
}

// deleteReleaseClaims deletes the release's PVCs, which outlive helm
// uninstall and would otherwise hold the pool's local NVMe volumes.
func deleteReleaseClaims(ctx context.Context, config *rest.Config, namespace, release string) error {
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	err = cs.CoreV1().PersistentVolumeClaims(namespace).DeleteCollection(ctx,
		metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: ClaimSelector(release).String()})
	if err != nil {
		return fmt.Errorf("deleting the PersistentVolumeClaims of release %s (%s): %w", release, ClaimSelector(release), err)
	}
	return nil
}
