package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// Pulsar's view of a stalled bookie, as the ISR is Kafka's: a ledger is
// written to one ensemble of bookies until the broker's BookKeeper client
// gives up on one of them (a write error, or no answer within
// bookkeeperClientTimeoutInSeconds) and replaces it, which starts a new
// ensemble in the ledger's metadata. While a ledger keeps one ensemble, the
// stalled bookie is still one of the bookies every entry is written to.

// ensemblesOf is the number of ensembles of each ledger of a
// non-partitioned topic, oldest ledger first, and the bookies of the
// newest ledger's newest ensemble (those being written to), from the
// topic's internal stats with ledger metadata (`pulsar-admin topics
// stats-internal --metadata`).
func ensemblesOf(ctx context.Context, adminURL, topic string) ([]int, []string, error) {
	name, ok := strings.CutPrefix(topic, "persistent://")
	if !ok {
		return nil, nil, fmt.Errorf("topic %q is not persistent://tenant/namespace/name", topic)
	}
	url := strings.TrimRight(adminURL, "/") + "/admin/v2/persistent/" + name + "/internalStats?metadata=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the ledgers of %s: %w", topic, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the ledgers of %s: %w", topic, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("reading the ledgers of %s: %s: %s", topic, resp.Status, strings.TrimSpace(string(body)))
	}
	return parseEnsembles(body)
}

// parseEnsembles reads the ensembles of each ledger from internal stats:
// {"ledgers":[{"ledgerId":7,"metadata":"LedgerMetadata{…, ensembles={0=[a, b, c], 120=[a, b, d]}, …}"}]}.
func parseEnsembles(stats []byte) (counts []int, current []string, err error) {
	var s struct {
		Ledgers []struct {
			LedgerID int64  `json:"ledgerId"`
			Metadata string `json:"metadata"`
		} `json:"ledgers"`
	}
	if err := json.Unmarshal(stats, &s); err != nil {
		return nil, nil, fmt.Errorf("internal stats: %w", err)
	}
	if len(s.Ledgers) == 0 {
		return nil, nil, fmt.Errorf("internal stats list no ledger: %.300s", stats)
	}
	for _, l := range s.Ledgers {
		es, err := localbrokers.LedgerEnsembles(l.Metadata)
		if err != nil {
			return nil, nil, fmt.Errorf("ledger %d: %w", l.LedgerID, err)
		}
		counts, current = append(counts, len(es)), es[len(es)-1]
	}
	return counts, current, nil
}
