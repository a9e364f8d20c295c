package pulsar

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// The first topic's owner, as the admin API answers the lookup of a real
// standalone, on a partitioned and on a non-partitioned first topic: the
// one broker's service URL. FirstTopic names what CreateTopics made.
func TestLookupOwner(t *testing.T) {
	ctx := context.Background()
	p := needPulsar(t)
	for _, partitions := range []int32{1, 3} {
		t.Run(fmt.Sprintf("%d partitions", partitions), func(t *testing.T) {
			runID := fmt.Sprintf("owner-%d-%d", partitions, time.Now().UnixNano())
			d := newDriver(t, v1alpha1.Level2, runID, nil)
			if err := d.CreateTopics(ctx, []driver.Topic{{Name: d.TopicName(0), Partitions: partitions}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.DeleteTopics(context.Background()) })
			got, err := LookupOwner(ctx, p.AdminURL(), nil, FirstTopic(runID, partitions))
			if err != nil {
				t.Fatal(err)
			}
			if got != p.ServiceURL() {
				t.Errorf("owner %q, want the standalone's %q", got, p.ServiceURL())
			}
		})
	}
	if _, err := LookupOwner(ctx, p.AdminURL(), nil, "no-such-tenant/ns/t"); err == nil {
		t.Error("the owner of a topic of no tenant was found")
	}
}
