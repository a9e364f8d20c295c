package experiment

// Stalls on Pulsar: one bookie of the ledger's ensemble stopped under
// load, on a standalone with three bookies.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/syncdelay"
)

// runPulsarStalls runs the cells on standalones with three bookies, one
// per bookie configuration of the cells' levels (levels 1 and 3 sync the
// journal before an answer, 2 and 4 do not), in the cells' order. The
// sync shim holds the journal writes and syncs of the third bookie while
// a flag file exists.
func runPulsarStalls(ctx context.Context, o StallOptions, cells []StallCell, dir, workerURL string, rec *recorder) ([]StallResult, error) {
	if len(cells) == 0 {
		return nil, nil
	}
	lib, err := syncdelay.Build(ctx, filepath.Join(dir, "shim"))
	if err != nil {
		return nil, err
	}
	var groups [][]StallCell
	var keys []string
	for _, c := range cells {
		eff, err := durability.Translate(c.System, c.Spec())
		if err != nil {
			return nil, err
		}
		key := fmt.Sprint(eff.Pulsar.Bookie)
		i := slices.Index(keys, key)
		if i < 0 {
			keys, groups = append(keys, key), append(groups, nil)
			i = len(keys) - 1
		}
		groups[i] = append(groups[i], c)
	}
	var out []StallResult
	for i, g := range groups {
		rs, err := runPulsarStandalone(ctx, o, g, filepath.Join(dir, fmt.Sprintf("pulsar%d", i+1)), lib, workerURL, rec)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// runPulsarStandalone starts a standalone with the bookie settings of the
// cells' level (all of them share it) and runs the cells on it.
func runPulsarStandalone(ctx context.Context, o StallOptions, cells []StallCell, dir, lib, workerURL string, rec *recorder) (_ []StallResult, err error) {
	base, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{Level: ptr.To(cells[0].Level)})
	if err != nil {
		return nil, err
	}
	pdir := filepath.Join(dir, "pulsar")
	// Every bookie's directory is under data/; the flag names the one to
	// stall (stallBookie).
	data := filepath.Join(pdir, "data") + "/"
	flag := filepath.Join(dir, "stall-bookie")
	broker := map[string]string{"bookkeeperClientTimeoutInSeconds": strconv.Itoa(int(o.AddTimeout.Seconds()))}
	for k, v := range base.Pulsar.Broker {
		broker[k] = v
	}
	start := time.Now()
	// Four bookies for ensembles of three: a spare to replace a stalled
	// one with, as a cluster with more bookies than the ensemble has.
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		BrokerConfig: broker, BookieConfig: base.Pulsar.Bookie, Dir: pdir, Log: o.Log, Bookies: 4,
		Env: syncdelay.StallEnv(lib, data, flag), JVM: o.PulsarJVM,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := p.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping Pulsar: %w", serr))
		}
	}()
	// The standalone names its bookies' directories after
	// --bookkeeper-dir with the bookie's index appended, and registers
	// them as bk<index>test (LocalBookkeeperEnsemble), which is what
	// ledger metadata lists.
	bookieDir := func(id string) (string, int, error) {
		n, _ := strings.CutPrefix(id, "bk")
		n, _ = strings.CutSuffix(n, "test")
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(p.BookiePorts) {
			return "", 0, fmt.Errorf("bookie %s is none of the standalone's %d (bk0test …)", id, len(p.BookiePorts))
		}
		d := filepath.Join(data, fmt.Sprintf("bookkeeper%d", i)) + "/"
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return "", 0, fmt.Errorf("bookie %s (index %d) has no directory %s to stall (%v)", id, i, d, err)
		}
		return d, i, nil
	}
	if err := shimLoaded(p.Pids(), syncdelay.StallEnv(lib, data, flag)); err != nil {
		return nil, err
	}
	o.Log("pulsar %s ready in %s (bookies: %v, add timeout %s); a bookie's journal writes and syncs stall while %s exists",
		p.Version, time.Since(start).Round(time.Second), base.Pulsar.Bookie, o.AddTimeout, flag)
	var out []StallResult
	for _, c := range cells {
		var brokers v1alpha1.BrokerEndpoints
		brokers.ServiceURL, brokers.AdminURL = p.ServiceURL(), p.AdminURL()
		r, err := runStall(ctx, o, c, brokers, p.Version, workerURL, rec, func(ctx context.Context, from time.Time) (StallResult, error) {
			return stallBookie(ctx, o, c, p.AdminURL(), flag, bookieDir, rec, from)
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// stallBookie waits until Before after from, then stalls the journal
// writes and syncs of the last bookie of the ensemble the topic is written
// to for the cell's Stall, reading the topic's ensembles before, during and
// after. The stall always ends, also on error.
func stallBookie(ctx context.Context, o StallOptions, c StallCell, adminURL, flag string, bookieDir func(addr string) (string, int, error), rec *recorder, from time.Time) (StallResult, error) {
	var r StallResult
	if err := sleepUntil(ctx, from.Add(o.Before)); err != nil {
		return r, err
	}
	_, topics := rec.take()
	if len(topics) != 1 {
		return r, fmt.Errorf("the run has %d topics, want 1", len(topics))
	}
	topic := topics[0]
	ens, current, err := ensemblesOf(ctx, adminURL, topic)
	if err != nil {
		return r, err
	}
	r.EnsemblesBefore = ens
	dir, index, err := bookieDir(current[len(current)-1])
	if err != nil {
		return r, err
	}
	r.Follower = int32(index)
	release, err := syncdelay.StallPath(flag, dir)
	if err != nil {
		return r, err
	}
	r.From = time.Now()
	defer func() { _ = release() }()
	if err := sleepUntil(ctx, r.From.Add(c.Stall-time.Second)); err != nil {
		return r, err
	}
	if r.EnsemblesDuring, _, err = ensemblesOf(ctx, adminURL, topic); err != nil {
		o.Log("%s: reading the ensembles during the stall: %v", c.Name(), err)
	}
	if err := sleepUntil(ctx, r.From.Add(c.Stall)); err != nil {
		return r, err
	}
	err = release()
	r.To = time.Now()
	if err != nil {
		return r, err
	}
	if err := sleepUntil(ctx, r.To.Add(time.Second)); err != nil {
		return r, err
	}
	if r.EnsemblesAfter, _, err = ensemblesOf(ctx, adminURL, topic); err != nil {
		o.Log("%s: reading the ensembles after the stall: %v", c.Name(), err)
	}
	return r, nil
}
