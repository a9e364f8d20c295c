package pulsar

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/repo"
)

// Defaults of the chart location: the Apache Pulsar chart repository and
// its chart 4.7.0 (Pulsar 4.0.12).
const (
	DefaultRepoURL      = "https://pulsar.apache.org/charts"
	DefaultChartName    = "pulsar"
	DefaultChartVersion = "4.7.0"
)

// ChartSource says where the chart comes from: a chart repository (an
// index.yaml at RepoURL), the chart's name in it and its version.
type ChartSource struct {
	RepoURL string
	Name    string
	// Version is an exact version or a semver range; empty means the
	// newest in the index. Only an exact version is served from the cache
	// without asking the repository.
	Version string
}

func (s ChartSource) withDefaults() ChartSource {
	if s.RepoURL == "" {
		s.RepoURL = DefaultRepoURL
	}
	if s.Name == "" {
		s.Name = DefaultChartName
	}
	return s
}

func (s ChartSource) String() string {
	v := s.Version
	if v == "" {
		v = "newest"
	}
	return fmt.Sprintf("chart %s %s from %s", s.Name, v, s.RepoURL)
}

// chartCache downloads a chart once into dir and hands out freshly loaded
// copies. It does the repository look-up itself rather than through
// action.ChartPathOptions.LocateChart, which has two traps for an
// operator: it first looks for a directory named like the chart in the
// process's working directory, and it writes the repository index under
// helmpath's cache home ($HELM_CACHE_HOME or ~/.cache/helm), not under
// the RepositoryCache it is given, which fails in a container with a
// read-only home.
type chartCache struct {
	source ChartSource
	dir    string

	mu      sync.Mutex
	archive []byte
}

// exactVersion matches a plain semantic version (no range operators).
var exactVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)

// load returns a new copy of the chart. A fresh copy per install matters:
// Helm's dependency processing removes disabled subcharts from the chart
// it is given, so a shared *chart.Chart would carry one install's values
// into the next.
func (c *chartCache) load() (*chart.Chart, error) {
	archive, err := c.fetch()
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", c.source, err)
	}
	return ch, nil
}

func (c *chartCache) fetch() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.archive != nil {
		return c.archive, nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("chart cache directory: %w", err)
	}
	if exactVersion.MatchString(c.source.Version) {
		cached := filepath.Join(c.dir, archiveName(c.source.Name, strings.TrimPrefix(c.source.Version, "v")))
		if b, err := os.ReadFile(cached); err == nil {
			c.archive = b
			return b, nil
		}
	}
	b, version, err := c.download()
	if err != nil {
		return nil, err
	}
	// The cache is an optimisation: a failed write only costs a download.
	_ = os.WriteFile(filepath.Join(c.dir, archiveName(c.source.Name, version)), b, 0o644)
	c.archive = b
	return b, nil
}

func archiveName(name, version string) string { return name + "-" + version + ".tgz" }

// download reads the repository index, picks the version and downloads
// the archive, checking its digest when the index has one.
func (c *chartCache) download() ([]byte, string, error) {
	getters := getter.Getters()
	sum := sha256.Sum256([]byte(c.source.RepoURL))
	r, err := repo.NewChartRepository(&repo.Entry{
		Name: "streambench-" + hex.EncodeToString(sum[:])[:12],
		URL:  c.source.RepoURL,
	}, getters)
	if err != nil {
		return nil, "", fmt.Errorf("chart repository %s: %w", c.source.RepoURL, err)
	}
	r.CachePath = c.dir
	indexPath, err := r.DownloadIndexFile()
	if err != nil {
		return nil, "", fmt.Errorf("reading the index of chart repository %s (set the chart repository URL to a reachable mirror): %w", c.source.RepoURL, err)
	}
	index, err := repo.LoadIndexFile(indexPath)
	if err != nil {
		return nil, "", fmt.Errorf("index of chart repository %s: %w", c.source.RepoURL, err)
	}
	cv, err := index.Get(c.source.Name, c.source.Version)
	if err != nil {
		return nil, "", fmt.Errorf("%s: not in the repository's index (%v); set an existing chart name and version", c.source, err)
	}
	if len(cv.URLs) == 0 {
		return nil, "", fmt.Errorf("%s: the index lists no download URL", c.source)
	}
	chartURL, err := repo.ResolveReferenceURL(c.source.RepoURL, cv.URLs[0])
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c.source, err)
	}
	g, err := getters.ByScheme(schemeOf(chartURL))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c.source, err)
	}
	buf, err := g.Get(chartURL, getter.WithURL(c.source.RepoURL))
	if err != nil {
		return nil, "", fmt.Errorf("downloading %s: %w", chartURL, err)
	}
	b := buf.Bytes()
	if cv.Digest != "" {
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != cv.Digest {
			return nil, "", fmt.Errorf("downloading %s: sha256 %x does not match the index's digest %s", chartURL, got, cv.Digest)
		}
	}
	return b, cv.Version, nil
}

func schemeOf(u string) string {
	if i := strings.Index(u, "://"); i > 0 {
		return u[:i]
	}
	return ""
}
