package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// dirStore is an archive in a directory: a key is the file at its path
// under the directory. A key cannot be both a file and the prefix of
// another (a and a/b), which S3 allows; the result files of a run never
// are.
type dirStore struct {
	loc Location
}

func openDir(loc Location) (*dirStore, error) {
	if loc.Dir == "" {
		return nil, fmt.Errorf("archive location names no directory: give %s", accepted)
	}
	fi, err := os.Stat(loc.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Created by the first Put, so that an archive named for a
		// local run's results needs no mkdir first.
	case err != nil:
		return nil, fmt.Errorf("archive %s: %w", loc, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("archive %s: %s is a file, not a directory: name a directory (or s3://BUCKET)", loc, loc.Dir)
	}
	return &dirStore{loc: loc}, nil
}

func (d *dirStore) String() string { return d.loc.String() }

func (d *dirStore) path(key string) string {
	return filepath.Join(d.loc.Dir, filepath.FromSlash(key))
}

// Put writes body to a temporary file beside the key's and links it to
// the key's name: link(2), unlike rename(2), fails when the name exists,
// so two writers of one key (a retried upload racing the first) never
// replace each other's file, and a reader never sees half a file. A
// crash leaves at most a temporary file, which List does not show.
func (d *dirStore) Put(ctx context.Context, key string, body []byte) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("archive %s: put: %w", d, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("archive %s: put %s: %w", d, key, err)
	}
	path := d.path(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("archive %s: put %s: %w (a directory store cannot hold a key and keys under it, such as a and a/b)", d, key, err)
	}
	tmp, err := writeTemp(filepath.Dir(path), body)
	if err != nil {
		return fmt.Errorf("archive %s: put %s: %w", d, key, err)
	}
	defer func() { _ = os.Remove(tmp) }()
	err = os.Link(tmp, path)
	if err == nil {
		// The file's bytes are synced (writeTemp), its name is not: a
		// power failure may lose the name, and the retried upload then
		// writes it again.
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("archive %s: put %s: %w (the directory store writes by hard link, so that it never replaces a file; its file system must support them)", d, key, err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("archive %s: put %s: it exists and cannot be read to compare: %w", d, key, err)
	}
	if bytes.Equal(old, body) {
		return nil
	}
	return existsError(d, key)
}

// writeTemp writes body to a new file in dir, synced, and returns its
// path.
func writeTemp(dir string, body []byte) (string, error) {
	f, err := os.CreateTemp(dir, tempMark+"*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(body)
	if err == nil {
		// CreateTemp makes 0600; results are read by whoever reads the
		// archive, as an S3 object would be.
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (d *dirStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("archive %s: get: %w", d, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("archive %s: get %s: %w", d, key, err)
	}
	b, err := os.ReadFile(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("archive %s: get %s: %w", d, key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("archive %s: get %s: %w", d, key, err)
	}
	return b, nil
}

// List walks the directory under prefix. Only regular files are keys: a
// symbolic link is not followed (the walk stays inside the directory),
// and files being written (tempMark) are left out.
func (d *dirStore) List(ctx context.Context, prefix string) ([]string, error) {
	prefix = strings.TrimSuffix(prefix, "/")
	start := d.loc.Dir
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("archive %s: list: prefix %w", d, err)
		}
		start = d.path(prefix)
	}
	fi, err := os.Lstat(start)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		// Nothing under it: the directory was never written, or prefix
		// is a key of its own, not a prefix of others.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archive %s: list %s: %w", d, prefix, err)
	}
	var keys []string
	err = filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), tempMark) {
			return nil
		}
		rel, err := filepath.Rel(d.loc.Dir, p)
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive %s: list %s: %w", d, prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}
