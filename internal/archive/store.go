package archive

import (
	"context"
	"errors"
	"fmt"
)

// ErrExists is what a Put of a key that exists with other bytes fails
// with: an archive never replaces a file (errors.Is).
var ErrExists = errors.New("exists with other content, and an archive never replaces a file")

// ErrNotFound is what a Get of a key that does not exist fails with
// (errors.Is).
var ErrNotFound = errors.New("no such key")

// Store is an archive: files under '/'-separated keys relative to its
// Location (ValidateKey), written once.
type Store interface {
	// Put writes body under key unless the key exists. If it exists with
	// the same bytes Put does nothing (a retried upload after a partial
	// failure); with other bytes it fails with an error wrapping
	// ErrExists that names the key, and the old bytes stay.
	Put(ctx context.Context, key string, body []byte) error
	// Get reads the file under key; a key that does not exist fails with
	// an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// List is every key under prefix ("" for all), recursively, sorted.
	// A prefix is whole segments: "runs/a" lists runs/a/x, not runs/ab.
	List(ctx context.Context, prefix string) ([]string, error)
	// String is the store's Location.
	String() string
}

// Open opens the archive at loc. opts is used only for an S3 location
// (S3Options says what it falls back to when empty). Opening an S3
// location checks that the bucket can be reached; opening a directory
// that does not exist yet succeeds, and the first Put creates it.
func Open(ctx context.Context, loc Location, opts S3Options) (Store, error) {
	switch loc.Kind {
	case KindS3:
		return openS3(ctx, loc, opts)
	case KindDir:
		return openDir(loc)
	}
	return nil, fmt.Errorf("archive location %s: kind %q is neither %q nor %q (use ParseLocation)", loc, string(loc.Kind), KindS3, KindDir)
}

// existsError is the error of a Put that would replace key in s.
func existsError(s Store, key string) error {
	return fmt.Errorf("archive %s: key %s %w; write it under another run's path, or remove the old one yourself if it is wrong", s, key, ErrExists)
}
