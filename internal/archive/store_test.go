package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/streambench/streambench-operator/internal/archive/archivetest"
)

// kinds opens a fresh store of each kind: a directory, and a prefix of a
// bucket of a real versitygw (archivetest), one gateway for the test.
// Each test under it gets its own store.
func kinds(t *testing.T) []struct {
	name string
	open func(t *testing.T) Store
} {
	t.Helper()
	endpoint, ak, sk, bucket := archivetest.Start(t)
	n := 0
	return []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"dir", func(t *testing.T) Store {
			s, err := Open(context.Background(), Location{Kind: KindDir, Dir: t.TempDir() + "/archive"}, S3Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"s3", func(t *testing.T) Store {
			// A prefix of its own per test: the stores share the bucket,
			// and each must see only its own keys.
			n++
			loc := Location{Kind: KindS3, Bucket: bucket, Prefix: fmt.Sprintf("t%d/archive", n)}
			s, err := Open(context.Background(), loc, S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: ak, SecretAccessKey: sk})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Run("round trip", func(t *testing.T) {
				s := k.open(t)
				files := map[string][]byte{
					"runs/ns/r/1/summary.json":          []byte(`{"ok":true}`),
					"runs/ns/r/1/repeat-1/summary.json": []byte(`{"repeat":1}`),
					"runs/ns/r/1/empty":                 {},
					"runs/ns/r2/1/summary.json":         []byte("r2"),
					"runs/ns/rx/1/summary.json":         []byte("rx"),
				}
				for key, b := range files {
					if err := s.Put(ctx, key, b); err != nil {
						t.Fatal(err)
					}
				}
				for key, want := range files {
					got, err := s.Get(ctx, key)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("Get(%s) = %q, %v, want %q", key, got, err, want)
					}
				}
				for _, tt := range []struct {
					prefix string
					want   []string
				}{
					{"", []string{"runs/ns/r/1/empty", "runs/ns/r/1/repeat-1/summary.json", "runs/ns/r/1/summary.json", "runs/ns/r2/1/summary.json", "runs/ns/rx/1/summary.json"}},
					// Whole segments: runs/ns/r is not runs/ns/r2.
					{"runs/ns/r", []string{"runs/ns/r/1/empty", "runs/ns/r/1/repeat-1/summary.json", "runs/ns/r/1/summary.json"}},
					{"runs/ns/r/", []string{"runs/ns/r/1/empty", "runs/ns/r/1/repeat-1/summary.json", "runs/ns/r/1/summary.json"}},
					{"runs/ns/r/1/repeat-1", []string{"runs/ns/r/1/repeat-1/summary.json"}},
					// A key is not under itself.
					{"runs/ns/r/1/summary.json", nil},
					{"runs/other", nil},
				} {
					got, err := s.List(ctx, tt.prefix)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, tt.want) {
						t.Errorf("List(%q) = %q, want %q", tt.prefix, got, tt.want)
					}
				}
			})
			t.Run("same bytes twice", func(t *testing.T) {
				s := k.open(t)
				for range 2 {
					if err := s.Put(ctx, "a/summary.json", []byte("one")); err != nil {
						t.Fatalf("Put of the same bytes: %v", err)
					}
				}
			})
			t.Run("other bytes", func(t *testing.T) {
				s := k.open(t)
				if err := s.Put(ctx, "a/summary.json", []byte("one")); err != nil {
					t.Fatal(err)
				}
				err := s.Put(ctx, "a/summary.json", []byte("two"))
				if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "key a/summary.json exists with other content") {
					t.Errorf("Put of other bytes = %v, want ErrExists naming the key", err)
				}
				if got, err := s.Get(ctx, "a/summary.json"); err != nil || string(got) != "one" {
					t.Errorf("after the refused Put, Get = %q, %v, want the old bytes", got, err)
				}
			})
			t.Run("racing writers", func(t *testing.T) {
				// Eight writers of one key with eight bodies: one wins,
				// the others get ErrExists, and the file is the winner's.
				s := k.open(t)
				const n = 8
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() { errs[i] = s.Put(ctx, "race/summary.json", []byte(fmt.Sprintf("writer %d", i))) })
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Errorf("writers %d and %d both succeeded", winner, i)
					case err == nil:
						winner = i
					case !errors.Is(err, ErrExists):
						t.Errorf("writer %d: %v, want nil or ErrExists", i, err)
					}
				}
				if winner < 0 {
					t.Fatal("no writer succeeded")
				}
				if got, err := s.Get(ctx, "race/summary.json"); err != nil || string(got) != fmt.Sprintf("writer %d", winner) {
					t.Errorf("Get = %q, %v, want writer %d's bytes", got, err, winner)
				}
			})
			t.Run("missing", func(t *testing.T) {
				s := k.open(t)
				if _, err := s.Get(ctx, "nothing/here"); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get of a missing key = %v, want ErrNotFound", err)
				}
				if keys, err := s.List(ctx, ""); err != nil || len(keys) != 0 {
					t.Errorf("List of an empty store = %q, %v, want none", keys, err)
				}
			})
			t.Run("invalid keys", func(t *testing.T) {
				s := k.open(t)
				for _, key := range []string{"", "/abs", "a/../b", "a//b"} {
					if err := s.Put(ctx, key, []byte("x")); err == nil {
						t.Errorf("Put(%q) succeeded", key)
					}
					if _, err := s.Get(ctx, key); err == nil || errors.Is(err, ErrNotFound) {
						t.Errorf("Get(%q) = %v, want the key's error", key, err)
					}
				}
				if _, err := s.List(ctx, "../x"); err == nil {
					t.Error(`List("../x") succeeded`)
				}
			})
		})
	}
}

func TestOpen(t *testing.T) {
	_, err := Open(context.Background(), Location{Kind: "gs"}, S3Options{})
	if err == nil || !strings.Contains(err.Error(), `kind "gs" is neither "s3" nor "file" (use ParseLocation)`) {
		t.Errorf("Open of an unknown kind = %v", err)
	}
}
