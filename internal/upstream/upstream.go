// Package upstream pins the large files streambench takes from other
// projects (Strimzi's source, which hack/images/strimzi.sh builds) and
// fetches them, checked, from where upstream serves them or from a local
// mirror directory (STREAMBENCH_MIRROR) on machines that cannot reach
// upstream. The small ones (the Pulsar chart, Strimzi's install files, the
// Prometheus Operator CRDs) live in the repository, under
// testdata/upstream, pinned by its SHA256SUMS.
//
// A source archive is pinned by what it holds, not by its bytes: GitHub's
// archive of a commit and the cut a mirror keeps (the same tree without the
// system tests, CI files and developer docs, under another top directory)
// are different files with the same sources. The pin is a digest over the
// archive's files, each by path below the top directory and content, leaving
// out the paths the cut leaves out; either form must give it.
package upstream

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MirrorEnv names the directory holding upstream files by their Name, for a
// machine that cannot reach upstream.
const MirrorEnv = "STREAMBENCH_MIRROR"

// Archive is a pinned source archive (.tar.gz).
type Archive struct {
	// Name is the file's name in a mirror directory and in the cache.
	Name string
	// URL is where upstream serves it: GitHub's archive of the tagged commit.
	URL string
	// Digest is TreeDigest of the archive with Without and Keep.
	Digest string
	// Without are the paths (below the top directory; a trailing / for a
	// directory) the pin leaves out, but those in Keep.
	Without []string
	Keep    []string
}

// strimziCut is what the mirror's Strimzi source tarballs leave out of the
// tag's tree: the system tests (their pom.xml stays: the Maven reactor lists
// the module), CI files and developer docs; none is built.
var (
	strimziWithout = []string{"systemtest/", ".github/", ".azure/", "development-docs/"}
	strimziKeep    = []string{"systemtest/pom.xml"}
)

// Archives are the pinned archives, by Name.
var Archives = map[string]Archive{
	"strimzi-1.2.0-src.tar.gz": {
		Name:    "strimzi-1.2.0-src.tar.gz",
		URL:     "https://github.com/strimzi/strimzi-kafka-operator/archive/6c7b43c4af0db547c10463ba09d1dfa6f5e156a0.tar.gz",
		Digest:  "03745097abc89b2e2d693d6ba22e154fc93cdcae1809e5c7d9c6ad317ce52e10",
		Without: strimziWithout,
		Keep:    strimziKeep,
	},
}

// left reports whether the pin leaves path out.
func (a Archive) left(path string) bool {
	for _, k := range a.Keep {
		if path == k {
			return false
		}
	}
	for _, w := range a.Without {
		if path == strings.TrimSuffix(w, "/") || (strings.HasSuffix(w, "/") && strings.HasPrefix(path, w)) {
			return true
		}
	}
	return false
}

// TreeDigest is the digest of a .tar.gz's files and symbolic links, each
// by its path below the archive's top directory and its content (a link:
// its target), sorted by path; modes, owners, times and directories do
// not count, nor what a leaves out.
func (a Archive) TreeDigest(r io.Reader) (string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return "", fmt.Errorf("not a gzip file: %w", err)
	}
	tr := tar.NewReader(gz)
	var lines []string
	top := ""
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading the tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeSymlink && h.Typeflag != tar.TypeDir {
			continue // GitHub's pax_global_header (the commit id), hard links none has
		}
		name := strings.TrimPrefix(h.Name, "./")
		first, rest, _ := strings.Cut(name, "/")
		if top == "" {
			top = first
		} else if first != top {
			return "", fmt.Errorf("%s is outside the archive's top directory %s/", h.Name, top)
		}
		rest = strings.TrimSuffix(rest, "/")
		if h.Typeflag == tar.TypeDir || rest == "" || a.left(rest) {
			continue
		}
		if h.Typeflag == tar.TypeSymlink {
			lines = append(lines, "l "+rest+" "+h.Linkname)
			continue
		}
		s := sha256.New()
		if _, err := io.Copy(s, tr); err != nil {
			return "", fmt.Errorf("reading %s: %w", h.Name, err)
		}
		lines = append(lines, "f "+rest+" "+hex.EncodeToString(s.Sum(nil)))
	}
	if len(lines) == 0 {
		return "", errors.New("the archive holds no files")
	}
	sort.Strings(lines)
	s := sha256.New()
	for _, l := range lines {
		s.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(s.Sum(nil)), nil
}

// verify checks the file at path against the pin.
func (a Archive) verify(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := a.TreeDigest(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got != a.Digest {
		return fmt.Errorf("%s is not the %s streambench pins: its tree digest is %s, the pin %s "+
			"(a changed or other version's file; take it from %s)", path, a.Name, got, a.Digest, a.URL)
	}
	return nil
}

// Fetch returns the path of a's checked copy in cacheDir, fetching it
// first when the cache has none: from mirror/<Name> when mirror is not
// empty, else from a.URL. A file that does not match the pin is refused
// and not kept.
func Fetch(ctx context.Context, a Archive, cacheDir, mirror string) (string, error) {
	dst := filepath.Join(cacheDir, a.Name)
	stamp := dst + ".verified"
	if b, err := os.ReadFile(stamp); err == nil && string(b) == a.Digest {
		if _, err := os.Stat(dst); err == nil {
			return dst, nil
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(cacheDir, "."+a.Name+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	from := a.URL
	if mirror != "" {
		from = filepath.Join(mirror, a.Name)
		err = copyFile(tmp, from)
	} else {
		err = download(ctx, tmp, a.URL)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		where := "upstream"
		if mirror != "" {
			where = "the mirror " + MirrorEnv + "=" + mirror
		}
		return "", fmt.Errorf("fetching %s from %s: %w (where upstream cannot be reached, set %s to a directory holding %s)",
			a.Name, where, err, MirrorEnv, a.Name)
	}
	if err := a.verify(tmp.Name()); err != nil {
		return "", fmt.Errorf("refusing %s from %s: %w", a.Name, from, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, os.WriteFile(stamp, []byte(a.Digest), 0o644)
}

func copyFile(dst io.Writer, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(dst, f)
	return err
}

func download(ctx context.Context, dst io.Writer, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(dst, resp.Body)
	return err
}
