// Package pulsar is the Pulsar driver: it creates the run's namespace with the
// durability's persistence policy, its topics, and producers and consumers
// configured as OpenMessaging Benchmark's Pulsar driver does.
package pulsar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sync"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsar/auth"
	"github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// Tenant holds every run's namespace, so benchmark data never mixes with a
// cluster's own tenants and is easy to find and clean up.
const Tenant = "streambench"

// Driver is the Pulsar driver.Driver. Safe for concurrent use.
type Driver struct {
	cfg       driver.Config
	settings  settings
	namespace string
	admin     pulsaradmin.Client
	client    pulsar.Client
	sec       *clientSecurity

	mu     sync.Mutex
	topics []driver.Topic
}

var _ driver.Driver = (*Driver)(nil)

var runIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// Namespace is the run's namespace: a fresh one per run, so a run never reads
// another run's topics and its persistence policy applies to its topics only.
func Namespace(runID string) string { return Tenant + "/sb-" + runID }

// New checks the configuration, translates the overrides and connects the
// admin and data clients. It creates nothing on the cluster; CreateTopics does.
func New(ctx context.Context, cfg driver.Config) (*Driver, error) {
	if cfg.System != "" && cfg.System != v1alpha1.SystemPulsar {
		return nil, fmt.Errorf("pulsar driver: system is %q; use the %s driver", cfg.System, cfg.System)
	}
	if cfg.Brokers.ServiceURL == "" || cfg.Brokers.AdminURL == "" {
		return nil, errors.New("pulsar driver: brokers need serviceURL (pulsar://host:6650) and adminURL (http://host:8080)")
	}
	if !runIDPattern.MatchString(cfg.RunID) {
		return nil, fmt.Errorf("pulsar driver: run id %q must be non-empty letters, digits, '-', '_' or '.' (it names the namespace)", cfg.RunID)
	}
	if err := checkPersistence(cfg.Durability.Pulsar); err != nil {
		return nil, err
	}
	s, err := translate(cfg.Overrides)
	if err != nil {
		return nil, err
	}
	useTLS := usesTLS(cfg.Security, cfg.Brokers)
	if err := schemes(useTLS, cfg.Brokers); err != nil {
		return nil, err
	}
	sec, err := newClientSecurity(cfg.Security, useTLS)
	if err != nil {
		return nil, err
	}
	if err := sec.check(ctx, cfg.Brokers); err != nil {
		return nil, err
	}
	adm, err := admin.NewPulsarClientWithAuthProvider(&config.Config{WebServiceURL: cfg.Brokers.AdminURL}, sec.transport())
	if err != nil {
		return nil, fmt.Errorf("pulsar admin client for %s: %w", cfg.Brokers.AdminURL, err)
	}
	opts := s.Client.options(cfg.Brokers.ServiceURL)
	// The client logs every connection, producer and consumer at info level;
	// a benchmark worker keeps warnings and errors only.
	opts.Logger = log.NewLoggerWithSlog(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// The one tls.Config carries the CA, the client certificate and the
	// verification mode (driver.TLSConfig), and records the negotiated
	// version; the client then ignores its own TLS* file options.
	opts.TLSConfig = sec.tls
	if sec.auth != nil {
		// check has initialised the provider (and, for OAuth2, holds
		// the first access token); a second Init would fetch another.
		opts.Authentication = initialized{sec.auth}
	}
	client, err := pulsar.NewClient(opts)
	if err != nil {
		return nil, sec.scrub(fmt.Errorf("pulsar client for %s: %w", cfg.Brokers.ServiceURL, err))
	}
	return &Driver{cfg: cfg, settings: s, namespace: Namespace(cfg.RunID), admin: adm, client: client, sec: sec}, nil
}

// initialized is an auth provider whose Init has run: pulsar.NewClient calls
// Init again, which for OAuth2 would drop the token check fetched.
type initialized struct{ auth.Provider }

func (initialized) Init() error { return nil }

func checkPersistence(p *v1alpha1.PulsarDurability) error {
	if p == nil {
		return errors.New("pulsar driver: durability.pulsar is missing; translate spec.durability with internal/durability first")
	}
	if p.EnsembleSize < 1 || p.WriteQuorum < 1 || p.AckQuorum < 1 {
		return fmt.Errorf("pulsar driver: durability.pulsar ensembleSize (%d), writeQuorum (%d) and ackQuorum (%d) must all be at least 1", p.EnsembleSize, p.WriteQuorum, p.AckQuorum)
	}
	if p.WriteQuorum > p.EnsembleSize || p.AckQuorum > p.WriteQuorum {
		return fmt.Errorf("pulsar driver: durability.pulsar needs ackQuorum (%d) <= writeQuorum (%d) <= ensembleSize (%d)", p.AckQuorum, p.WriteQuorum, p.EnsembleSize)
	}
	return nil
}

// NamespaceName is the run's namespace (tenant/namespace).
func (d *Driver) NamespaceName() string { return d.namespace }

// TopicName is the i-th benchmark topic, persistent in the run's namespace.
func (d *Driver) TopicName(i int) string {
	return fmt.Sprintf("persistent://%s/topic-%d", d.namespace, i)
}

// CreateTopics makes the run's namespace with OMB's policies (the
// durability's persistence policy, an unlimited backlog quota so a backlog
// test never hits the quota, deduplication off) and then the topics: a
// partitioned topic when partitions > 1, a non-partitioned one for 1, as
// OMB's Pulsar driver does.
func (d *Driver) CreateTopics(ctx context.Context, topics []driver.Topic) error {
	if err := d.ensureTenant(ctx); err != nil {
		return err
	}
	if err := d.admin.Namespaces().CreateNamespaceWithContext(ctx, d.namespace); err != nil && !isConflict(err) {
		return fmt.Errorf("creating namespace %s: %w", d.namespace, err)
	}
	p := d.cfg.Durability.Pulsar
	pp := utils.NewPersistencePolicies(int(p.EnsembleSize), int(p.WriteQuorum), int(p.AckQuorum), 0)
	if err := d.admin.Namespaces().SetPersistenceWithContext(ctx, d.namespace, pp); err != nil {
		return fmt.Errorf("setting persistence %d/%d/%d on %s (does the cluster have %d bookies?): %w", p.EnsembleSize, p.WriteQuorum, p.AckQuorum, d.namespace, p.EnsembleSize, err)
	}
	quota := utils.NewBacklogQuota(-1, -1, utils.ProducerRequestHold)
	if err := d.admin.Namespaces().SetBacklogQuotaWithContext(ctx, d.namespace, quota, utils.DestinationStorage); err != nil {
		return fmt.Errorf("setting an unlimited backlog quota on %s: %w", d.namespace, err)
	}
	if err := d.admin.Namespaces().SetDeduplicationStatusWithContext(ctx, d.namespace, false); err != nil {
		return fmt.Errorf("turning deduplication off on %s: %w", d.namespace, err)
	}
	for i, t := range topics {
		if t.Partitions < 1 {
			return fmt.Errorf("topic %d: partitions (%d) must be at least 1", i, t.Partitions)
		}
		name := t.Name
		if name == "" {
			name = d.TopicName(i)
		}
		tn, err := utils.GetTopicName(name)
		if err != nil {
			return fmt.Errorf("topic %q: %w", name, err)
		}
		parts := int(t.Partitions)
		if parts == 1 {
			parts = 0 // the admin API's way of saying non-partitioned
		}
		if err := d.admin.Topics().CreateWithContext(ctx, *tn, parts); err != nil && !isConflict(err) {
			return fmt.Errorf("creating topic %s with %d partitions: %w", name, t.Partitions, err)
		}
		d.mu.Lock()
		d.topics = append(d.topics, driver.Topic{Name: name, Partitions: t.Partitions})
		d.mu.Unlock()
	}
	return nil
}

func (d *Driver) ensureTenant(ctx context.Context) error {
	tenants, err := d.admin.Tenants().ListWithContext(ctx)
	if err != nil {
		return fmt.Errorf("listing tenants at %s: %w", d.cfg.Brokers.AdminURL, err)
	}
	for _, t := range tenants {
		if t == Tenant {
			return nil
		}
	}
	clusters, err := d.admin.Clusters().ListWithContext(ctx)
	if err != nil {
		return fmt.Errorf("listing clusters at %s: %w", d.cfg.Brokers.AdminURL, err)
	}
	err = d.admin.Tenants().CreateWithContext(ctx, utils.TenantData{Name: Tenant, AllowedClusters: clusters})
	if err != nil && !isConflict(err) {
		return fmt.Errorf("creating tenant %s: %w", Tenant, err)
	}
	return nil
}

// DeleteTopics force-deletes the run's topics (their subscriptions and
// backlog with them) and then the namespace, so no run leaves data behind.
func (d *Driver) DeleteTopics(ctx context.Context) error {
	d.mu.Lock()
	topics := d.topics
	d.topics = nil
	d.mu.Unlock()
	var errs []error
	for _, t := range topics {
		tn, err := utils.GetTopicName(t.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := d.admin.Topics().DeleteWithContext(ctx, *tn, true, t.Partitions == 1); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting topic %s: %w", t.Name, err))
		}
	}
	if err := d.admin.Namespaces().DeleteNamespaceWithContext(ctx, d.namespace); err != nil && !isNotFound(err) {
		errs = append(errs, fmt.Errorf("deleting namespace %s: %w", d.namespace, err))
	}
	return errors.Join(errs...)
}

// Close closes the data client (and with it every producer and consumer).
func (d *Driver) Close() error {
	d.client.Close()
	return nil
}

func isConflict(err error) bool { return restCode(err) == http.StatusConflict }
func isNotFound(err error) bool { return restCode(err) == http.StatusNotFound }

func restCode(err error) int {
	var re rest.Error
	if errors.As(err, &re) {
		return re.Code
	}
	var rp *rest.Error
	if errors.As(err, &rp) && rp != nil {
		return rp.Code
	}
	return 0
}
