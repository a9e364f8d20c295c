package archive

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// LocalNamespace is the namespace part of a local run's RunPath (a run of
// `streambench run`, which has no Kubernetes namespace).
const LocalNamespace = "local"

// startLayout is how RunPath writes a run's start: UTC to the second,
// ISO 8601's basic format, so that a run's paths sort by start and need
// no escaping in a URL or a file name.
const startLayout = "20060102T150405Z"

// RunPath is where a run's files go in an archive:
// runs/<namespace>/<run>/<start>, start in UTC as 20060102T150405Z. The
// start keeps two runs of one name (a run deleted and created again)
// apart. namespace and run are Kubernetes names (LocalNamespace for a
// local run), which need no escaping in a key.
func RunPath(namespace, run string, start time.Time) string {
	return "runs/" + namespace + "/" + run + "/" + start.UTC().Format(startLayout)
}

// Upload puts files (relative '/'-separated names to their bytes) under
// path, in sorted order, and stops at the first that fails. A retried
// Upload of the same files after a partial failure writes what is missing
// and fails on none (Store.Put).
func Upload(ctx context.Context, s Store, path string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if err := s.Put(ctx, join(path, n), files[n]); err != nil {
			return fmt.Errorf("upload to %s stopped at %s (%d of %d files written): %w", s.String(), join(path, n), i, len(names), err)
		}
	}
	return nil
}

// UploadDir puts every regular file under dir under path, with its name
// relative to dir, in sorted order, and says how many it put (the files
// put before an error, with one). Symbolic links and other special files
// are left out: a results directory has none, and a link could name
// anything on the machine.
func UploadDir(ctx context.Context, s Store, path, dir string) (int, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("upload of %s to %s: %w", dir, s.String(), err)
	}
	sort.Strings(names)
	for i, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err == nil {
			err = s.Put(ctx, join(path, n), b)
		}
		if err != nil {
			return i, fmt.Errorf("upload of %s to %s stopped at %s (%d of %d files written): %w", dir, s.String(), n, i, len(names), err)
		}
	}
	return len(names), nil
}

// Fetch copies every key under prefix into dir, named as under prefix
// ("" for the whole archive), and says how many it copied. Every key is
// checked before anything is written: a key that would leave dir (a
// ".." or an empty segment, written into a bucket by another client)
// fails the whole Fetch, since a bucket that someone else can write must
// not write outside dir. Files already in dir are not replaced: one with
// the same bytes is left as it is, one with others fails with ErrExists
// (a Fetch into the directory of an earlier one picks up where it
// stopped).
func Fetch(ctx context.Context, s Store, prefix, dir string) (int, error) {
	prefix = strings.Trim(prefix, "/")
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	rels := make([]string, len(keys))
	for i, k := range keys {
		rel := k
		if prefix != "" {
			rel = strings.TrimPrefix(k, prefix+"/")
		}
		if err := ValidateKey(rel); err != nil || !filepath.IsLocal(filepath.FromSlash(rel)) {
			if err == nil {
				err = fmt.Errorf("key %q is not a local path", rel)
			}
			return 0, fmt.Errorf("fetch of %s from %s refused, nothing written: object %q has no safe name under %s: %w", prefix, s.String(), k, dir, err)
		}
		rels[i] = rel
	}
	out, err := openDir(Location{Kind: KindDir, Dir: filepath.Clean(dir)})
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		b, err := s.Get(ctx, k)
		if err == nil {
			err = out.Put(ctx, rels[i], b)
		}
		if err != nil {
			return i, fmt.Errorf("fetch of %s from %s into %s stopped at %s (%d of %d files copied): %w", prefix, s.String(), dir, k, i, len(keys), err)
		}
	}
	return len(keys), nil
}
