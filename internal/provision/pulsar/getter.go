package pulsar

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RESTClientGetter adapts a *rest.Config and a namespace to the
// genericclioptions.RESTClientGetter that Helm's action.Configuration
// needs. Helm ships none: its getters read kubeconfig files, and an
// operator has only the in-cluster rest.Config of its manager.
//
// The namespace matters: Helm's kube client creates a release's namespaced
// objects in the namespace its getter's ClientConfig reports, not in
// action.Install.Namespace (which only labels the release). Each getter
// therefore serves exactly one namespace, the run's.
type RESTClientGetter struct {
	config    *rest.Config
	namespace string

	once      sync.Once
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	err       error
}

var _ genericclioptions.RESTClientGetter = (*RESTClientGetter)(nil)

// NewRESTClientGetter returns a getter for config whose default namespace
// is namespace. config is copied; later changes to it do not apply.
func NewRESTClientGetter(config *rest.Config, namespace string) *RESTClientGetter {
	c := rest.CopyConfig(config)
	// Helm's discovery walks every API group; the client-go defaults
	// (5 QPS) would throttle it for seconds on a cluster with many CRDs.
	if c.QPS == 0 {
		c.QPS = 50
	}
	if c.Burst == 0 {
		c.Burst = 100
	}
	return &RESTClientGetter{config: c, namespace: namespace}
}

// ToRESTConfig returns a copy of the config.
func (g *RESTClientGetter) ToRESTConfig() (*rest.Config, error) {
	return rest.CopyConfig(g.config), nil
}

// ToDiscoveryClient returns a discovery client cached in memory for the
// getter's lifetime (one Helm operation).
func (g *RESTClientGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	g.init()
	return g.discovery, g.err
}

// ToRESTMapper returns a mapper over the cached discovery, which re-reads
// discovery when a kind is not found (a CRD installed by the chart).
func (g *RESTClientGetter) ToRESTMapper() (meta.RESTMapper, error) {
	g.init()
	return g.mapper, g.err
}

// ToRawKubeConfigLoader returns a ClientConfig that reports the getter's
// namespace and config.
func (g *RESTClientGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return namespacedClientConfig{getter: g}
}

func (g *RESTClientGetter) init() {
	g.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(g.config)
		if err != nil {
			g.err = err
			return
		}
		g.discovery = memory.NewMemCacheClient(dc)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
		g.mapper = restmapper.NewShortcutExpander(mapper, g.discovery, nil)
	})
}

// namespacedClientConfig is the clientcmd.ClientConfig of a
// RESTClientGetter: no kubeconfig file behind it.
type namespacedClientConfig struct{ getter *RESTClientGetter }

func (c namespacedClientConfig) RawConfig() (clientcmdapi.Config, error) {
	// Nothing reads a kubeconfig here; an empty one says so.
	return *clientcmdapi.NewConfig(), nil
}

func (c namespacedClientConfig) ClientConfig() (*rest.Config, error) {
	return c.getter.ToRESTConfig()
}

func (c namespacedClientConfig) Namespace() (string, bool, error) {
	// true: the namespace is set explicitly, not a kubeconfig default.
	return c.getter.namespace, true, nil
}

func (c namespacedClientConfig) ConfigAccess() clientcmd.ConfigAccess {
	// Loading rules with no files: kubectl's config commands would find
	// nothing to read or write, which is true.
	return &clientcmd.ClientConfigLoadingRules{}
}
