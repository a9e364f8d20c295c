package pulsar

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
)

func newDriver(t *testing.T, level v1alpha1.Level, runID string, overrides *v1alpha1.DriverSpec) *Driver {
	t.Helper()
	p := needPulsar(t)
	d, err := New(context.Background(), driver.Config{
		System:     v1alpha1.SystemPulsar,
		Brokers:    v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURL(), AdminURL: p.AdminURL()},
		Durability: translateLevel(t, level),
		Overrides:  overrides,
		RunID:      runID,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func adminClient(t *testing.T) pulsaradmin.Client {
	t.Helper()
	a, err := pulsaradmin.NewClient(&pulsaradmin.Config{WebServiceURL: needPulsar(t).AdminURL()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The namespace's persistence policy, read back through the admin API, is
// what the durability level asks for: sync replication acks on 2 of 3
// bookies, async on 1 of 3.
func TestNamespacePersistenceFollowsLevel(t *testing.T) {
	admin := adminClient(t)
	for _, tt := range []struct {
		level                    v1alpha1.Level
		ensemble, write, ackQuor int
	}{
		{v1alpha1.Level2, 3, 3, 2},
		{v1alpha1.Level4, 3, 3, 1},
	} {
		t.Run(fmt.Sprintf("level%d", tt.level), func(t *testing.T) {
			ctx := context.Background()
			d := newDriver(t, tt.level, fmt.Sprintf("persist-l%d-%d", tt.level, time.Now().UnixNano()), nil)
			if err := d.CreateTopics(ctx, []driver.Topic{{Name: d.TopicName(0), Partitions: 1}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.DeleteTopics(context.Background()) })

			// A topic's ledger really carries the quorums: its BookKeeper
			// metadata, read from a bookie, is what the namespace says.
			checkLedgerQuorums(t, d, admin, tt.ensemble, tt.write, tt.ackQuor)

			p, err := admin.Namespaces().GetPersistence(d.NamespaceName())
			if err != nil {
				t.Fatal(err)
			}
			if p.BookkeeperEnsemble != tt.ensemble || p.BookkeeperWriteQuorum != tt.write || p.BookkeeperAckQuorum != tt.ackQuor {
				t.Errorf("persistence of %s = %d/%d/%d; want %d/%d/%d", d.NamespaceName(),
					p.BookkeeperEnsemble, p.BookkeeperWriteQuorum, p.BookkeeperAckQuorum, tt.ensemble, tt.write, tt.ackQuor)
			}
			pol, err := admin.Namespaces().GetPolicies(d.NamespaceName())
			if err != nil {
				t.Fatal(err)
			}
			if pol.DeduplicationEnabled == nil || *pol.DeduplicationEnabled {
				t.Errorf("deduplication = %v; want explicitly off", pol.DeduplicationEnabled)
			}
			q, ok := pol.BacklogQuotaMap[utils.DestinationStorage]
			if !ok || q.LimitSize != -1 {
				t.Errorf("backlog quota = %+v (set %v); want an unlimited size (-1)", q, ok)
			}
		})
	}
}

// The bookies run with the bookie settings the durability translation asked
// for. The first bookie's HTTP admin server reports the properties of the
// configuration object the bookie reads its settings from (only keys that
// were set: started without the translation's map, this test sees none of
// them); journalSyncData=false and journalMaxGroupWaitMSec=1 also differ from
// BookKeeper's defaults (true, 2).
func TestBookiesRunWithTranslatedJournalSettings(t *testing.T) {
	p := needPulsar(t)
	want := translateLevel(t, startLevel).Pulsar.Bookie
	if want[durability.PulsarBookieJournalSyncData] != "false" {
		t.Fatalf("level %d's bookie map has journalSyncData %q; this test expects a level with async local durability", startLevel, want[durability.PulsarBookieJournalSyncData])
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/config/server_config", p.BookieHTTPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bookie server_config: %d %s", resp.StatusCode, body)
	}
	var conf map[string]any
	if err := json.Unmarshal(body, &conf); err != nil {
		t.Fatalf("bookie server_config is not a JSON object: %v\n%s", err, body)
	}
	// The answer is the bookie's own configuration, not the broker's.
	if got := fmt.Sprint(conf["bookiePort"]); got != strconv.Itoa(p.BookiePorts[0]) {
		t.Errorf("bookiePort = %s; want the first bookie's %d", got, p.BookiePorts[0])
	}
	for k, v := range want {
		if got := fmt.Sprint(conf[k]); got != v {
			t.Errorf("bookie %s = %q; want %q from the level %d translation", k, got, v, startLevel)
		}
	}
}

// checkLedgerQuorums publishes one message to the driver's first topic and
// reads the ensemble, write and ack quorum of the topic's current ledger from
// a bookie's HTTP admin API (/api/v1/ledger/metadata).
func checkLedgerQuorums(t *testing.T, d *Driver, admin pulsaradmin.Client, ensemble, write, ack int) {
	t.Helper()
	ctx := context.Background()
	prod, err := d.CreateProducer(ctx, d.TopicName(0))
	if err != nil {
		t.Fatal(err)
	}
	produce(t, prod, "ledger", 1)
	prod.Close()
	tn, _ := utils.GetTopicName(d.TopicName(0))
	stats, err := admin.Topics().GetInternalStats(*tn)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Ledgers) == 0 {
		t.Fatalf("%s has no ledgers after a publish: %+v", d.TopicName(0), stats)
	}
	ledger := stats.Ledgers[len(stats.Ledgers)-1].LedgerID
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/ledger/metadata/?ledger_id=%d", needPulsar(t).BookieHTTPPort, ledger)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	var md map[string]any
	if err := json.Unmarshal(body, &md); err != nil {
		t.Fatalf("ledger metadata is not a JSON object: %v\n%s", err, body)
	}
	got := map[string]string{}
	for _, k := range []string{"ensembleSize", "writeQuorumSize", "ackQuorumSize"} {
		got[k] = findKey(md, k)
	}
	want := map[string]string{"ensembleSize": strconv.Itoa(ensemble), "writeQuorumSize": strconv.Itoa(write), "ackQuorumSize": strconv.Itoa(ack)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ledger %d %s = %q; want %s (metadata %s)", ledger, k, got[k], v, body)
		}
	}
}

// findKey returns the first value named key anywhere in a decoded JSON value.
func findKey(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		if val, ok := x[key]; ok {
			return fmt.Sprint(val)
		}
		for _, val := range x {
			if s := findKey(val, key); s != "" {
				return s
			}
		}
	case []any:
		for _, val := range x {
			if s := findKey(val, key); s != "" {
				return s
			}
		}
	}
	return ""
}

// record counts, per subscription, how often each message id arrived.
type record struct {
	mu     sync.Mutex
	seen   map[string]int
	total  int
	parts  map[int32]bool
	badPub int
}

func newRecord() *record { return &record{seen: map[string]int{}, parts: map[int32]bool{}} }

func (r *record) callback(started time.Time) driver.ConsumerCallback {
	return func(m driver.Message) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen[string(m.Payload)]++
		r.total++
		r.parts[m.Partition] = true
		if m.PublishTime.Before(started.Add(-time.Minute)) || m.PublishTime.After(time.Now().Add(time.Minute)) {
			r.badPub++
		}
	}
}

func (r *record) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// hasAll reports whether every id arrived.
func (r *record) hasAll(ids []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if r.seen[id] == 0 {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ackerFunc is a function as a driver.Acker that sees what the ack carries.
type ackerFunc func(payload []byte, tag driver.Tag, err error)

func (f ackerFunc) Acked(payload []byte, tag driver.Tag, err error) { f(payload, tag, err) }

// produce sends n keyed messages whose payload is a unique id and returns
// the ids the broker acknowledged; each ack must carry back its own
// message's payload and tag.
func produce(t *testing.T, p driver.Producer, prefix string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var (
		mu    sync.Mutex
		acked []string
		fails []error
		wg    sync.WaitGroup
	)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s-%06d", prefix, i)
		wg.Add(1)
		tag := driver.Tag{int64(i), -int64(i)}
		p.Send(ctx, []byte("key-"+strconv.Itoa(i%37)), []byte(id), tag, ackerFunc(func(payload []byte, gotTag driver.Tag, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fails = append(fails, err)
				return
			}
			if string(payload) != id || gotTag != tag {
				t.Errorf("message %s acked with payload %q and tag %v, want its own and %v", id, payload, gotTag, tag)
			}
			acked = append(acked, id)
		}))
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(fails) > 0 {
		t.Fatalf("%d of %d sends failed, first: %v", len(fails), n, fails[0])
	}
	if len(acked) != n {
		t.Fatalf("%d of %d messages acknowledged", len(acked), n)
	}
	return acked
}

// Every acknowledged message is received exactly once per subscription, on a
// partitioned and on a non-partitioned topic; a paused consumer receives
// nothing until it resumes; DeleteTopics removes the topics and the namespace.
func TestProduceConsumeExactlyOncePerSubscription(t *testing.T) {
	ctx := context.Background()
	admin := adminClient(t)
	d := newDriver(t, v1alpha1.Level2, fmt.Sprintf("e2e-%d", time.Now().UnixNano()), nil)
	topics := []driver.Topic{{Name: d.TopicName(0), Partitions: 4}, {Name: d.TopicName(1), Partitions: 1}}
	if err := d.CreateTopics(ctx, topics); err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = d.DeleteTopics(context.Background())
		}
	})

	for _, tp := range topics {
		tn, _ := utils.GetTopicName(tp.Name)
		md, err := admin.Topics().GetMetadata(*tn)
		if err != nil {
			t.Fatal(err)
		}
		want := int(tp.Partitions)
		if want == 1 {
			want = 0 // non-partitioned
		}
		if md.Partitions != want {
			t.Errorf("%s has %d partitions in its metadata; want %d", tp.Name, md.Partitions, want)
		}
	}

	for _, tp := range topics {
		t.Run(fmt.Sprintf("partitions=%d", tp.Partitions), func(t *testing.T) {
			started := time.Now()
			subA, subB := newRecord(), newRecord()
			ca, err := d.CreateConsumer(ctx, tp.Name, "sub-a", subA.callback(started))
			if err != nil {
				t.Fatal(err)
			}
			defer ca.Close()
			cb, err := d.CreateConsumer(ctx, tp.Name, "sub-b", subB.callback(started))
			if err != nil {
				t.Fatal(err)
			}
			defer cb.Close()
			prod, err := d.CreateProducer(ctx, tp.Name)
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()

			first := produce(t, prod, "first", 3000)
			waitFor(t, "both subscriptions to receive the first batch", 90*time.Second, func() bool {
				return subA.hasAll(first) && subB.hasAll(first)
			})

			// Pause B, publish more: A receives it, B receives nothing.
			cb.Pause()
			pausedAt := subB.count()
			second := produce(t, prod, "second", 1000)
			waitFor(t, "subscription A to receive the second batch", 90*time.Second, func() bool { return subA.hasAll(second) })
			time.Sleep(time.Second) // B had the same time to (wrongly) receive it
			if got := subB.count(); got != pausedAt {
				t.Fatalf("paused consumer received %d messages; want none", got-pausedAt)
			}
			cb.Resume()
			waitFor(t, "subscription B to receive the second batch after resume", 90*time.Second, func() bool { return subB.hasAll(second) })
			time.Sleep(500 * time.Millisecond) // let any duplicate arrive before counting

			all := append(append([]string{}, first...), second...)
			for name, r := range map[string]*record{"sub-a": subA, "sub-b": subB} {
				r.mu.Lock()
				if r.total != len(all) {
					t.Errorf("%s received %d messages; want exactly %d", name, r.total, len(all))
				}
				for _, id := range all {
					if c := r.seen[id]; c != 1 {
						t.Errorf("%s received %s %d times; want once", name, id, c)
						break
					}
				}
				if r.badPub > 0 {
					t.Errorf("%s: %d messages had a publish time outside the test's time", name, r.badPub)
				}
				for p := range r.parts {
					if p < 0 || p >= tp.Partitions {
						t.Errorf("%s: message from partition %d; topic has %d", name, p, tp.Partitions)
					}
				}
				if tp.Partitions > 1 && len(r.parts) < 2 {
					t.Errorf("%s: keyed messages arrived from partitions %v only; want them spread over the %d partitions", name, r.parts, tp.Partitions)
				}
				r.mu.Unlock()
			}
		})
	}

	if err := d.DeleteTopics(ctx); err != nil {
		t.Fatal(err)
	}
	deleted = true
	nss, err := admin.Namespaces().GetNamespaces(Tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss {
		if ns == d.NamespaceName() {
			t.Errorf("namespace %s still exists after DeleteTopics", ns)
		}
	}
}

// New refuses bad overrides before it touches the cluster, naming the key.
func TestNewRejectsUnsupportedOverride(t *testing.T) {
	_, err := New(context.Background(), driver.Config{
		System:     v1alpha1.SystemPulsar,
		Brokers:    v1alpha1.BrokerEndpoints{ServiceURL: "pulsar://127.0.0.1:1", AdminURL: "http://127.0.0.1:1"},
		Durability: translateLevel(t, v1alpha1.Level2),
		Overrides:  &v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{Producer: map[string]string{"lingerMs": "1"}}},
		RunID:      "x",
	})
	if err == nil || !strings.Contains(err.Error(), "spec.driver.pulsar.producer.lingerMs") {
		t.Fatalf("New = %v; want an error naming spec.driver.pulsar.producer.lingerMs", err)
	}
}
