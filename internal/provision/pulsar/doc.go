// Package pulsar deploys the Pulsar cluster of a managed run as a Helm
// release of the Apache Pulsar chart (apache/pulsar-helm-chart), and reads
// its readiness.
//
// It has three parts:
//
//   - pure builders: Values (the chart values of a run), ReleaseName,
//     AuxiliaryPlacementOf and CheckMetadataStoreClass (where ZooKeeper,
//     autorecovery and the init Jobs go, and the class ZooKeeper's claims
//     get), the post-renderers (AffinityPostRenderer and
//     AuxiliaryAffinityPostRenderer: what the chart's values cannot
//     express; BrokerRBACRenderer: the broker's Role and binding
//     left out, so the operator never grants more than it holds;
//     PodMonitorRenderer: the monitoring labels the chart cannot set;
//     CertificateRenderer: the chart's cert-manager Certificate left out;
//     ScopeRenderer, last: CheckManifest refuses an object of a kind not in
//     RenderedKinds or in another namespace than the run's),
//     the service addresses ServiceURL and AdminURL (ServiceURLTLS,
//     AdminURLTLS; Endpoints picks), and Secrets, the CA, certificate,
//     signing key and tokens a secured run's brokers and clients read
//     (security.go);
//   - Ready, a pure verdict on the release's StatefulSets and init Jobs,
//     as read by the controller, and Unschedulable, the scheduler's word
//     on the release's pods that have no node;
//   - Installer, which runs helm install and uninstall through Helm's Go
//     SDK in goroutines, so that a reconcile starts an operation and polls
//     its Result instead of blocking on it. It keeps the release records
//     in the operator's namespace (releaseStore), not the run's, where a
//     tenant could forge one, and runs no chart hook.
//
// What a managed Pulsar run deploys, all in the run's namespace, with the
// chart's fullname forced to the release name: StatefulSets
// <release>-zookeeper, -bookie, -recovery (autorecovery) and -broker, and
// the Jobs <release>-pulsar-init and -bookie-init, which the chart renders
// on helm install only (.Release.IsInstall). That is why the Installer
// never upgrades: an upgrade renders no init Jobs, so upgrading a release
// whose install failed before they ran would leave the brokers waiting
// for cluster metadata forever. Such a release is removed and installed
// afresh instead.
package pulsar
