package pulsar

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// The package's integration tests share ONE real Pulsar standalone (ZooKeeper,
// 3 bookies, a broker; a JVM from Maven Central jars), started on first use so
// the pure table tests never need it, and always stopped by TestMain.
//
// The bookies run with the bookie settings of startLevel's translation, so a
// test can prove those settings reach the bookies.
const startLevel = v1alpha1.Level2

var (
	standaloneOnce sync.Once
	standalone     *localbrokers.Pulsar
	standaloneErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if standalone != nil {
		if err := standalone.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping pulsar standalone:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// needPulsar returns the shared standalone, starting it the first time.
func needPulsar(t *testing.T) *localbrokers.Pulsar {
	t.Helper()
	standaloneOnce.Do(func() {
		level := startLevel
		eff, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{Level: &level})
		if err != nil {
			standaloneErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
		defer cancel()
		began := time.Now()
		standalone, standaloneErr = localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
			Bookies:      3,
			BookieConfig: eff.Pulsar.Bookie,
			BrokerConfig: eff.Pulsar.Broker,
			BookieHTTP:   true,
			JVM:          localbrokers.PulsarTestJVM,
			Log:          func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) },
		})
		if standaloneErr == nil {
			fmt.Fprintf(os.Stderr, "pulsar standalone started in %s\n", time.Since(began).Round(time.Second))
		}
	})
	if standaloneErr != nil {
		t.Fatalf("starting pulsar standalone: %v", standaloneErr)
	}
	return standalone
}

func translateLevel(t *testing.T, level v1alpha1.Level) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{Level: &level})
	if err != nil {
		t.Fatalf("durability.Translate(level %d): %v", level, err)
	}
	return eff
}
