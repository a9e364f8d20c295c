package archive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streambench/streambench-operator/internal/archive/archivetest"
)

func TestRunPath(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	for _, tt := range []struct {
		ns, run string
		start   time.Time
		want    string
	}{
		{"bench", "ack2-async-x7k2p", time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC), "runs/bench/ack2-async-x7k2p/20261201T020304Z"},
		// UTC whatever the zone, and to the second.
		{"bench", "r", time.Date(2026, 12, 1, 3, 3, 4, 999_000_000, cet), "runs/bench/r/20261201T020304Z"},
		{LocalNamespace, "smoke", time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), "runs/local/smoke/20270102T000000Z"},
	} {
		got := RunPath(tt.ns, tt.run, tt.start)
		if got != tt.want {
			t.Errorf("RunPath(%q, %q, %v) = %q, want %q", tt.ns, tt.run, tt.start, got, tt.want)
		}
		if err := ValidateKey(got); err != nil {
			t.Errorf("RunPath(%q, %q, %v) is not a key: %v", tt.ns, tt.run, tt.start, err)
		}
	}
}

// recording is a store that records its Puts and fails the one of
// failKey.
type recording struct {
	Store
	puts    []string
	failKey string
}

func (r *recording) Put(ctx context.Context, key string, body []byte) error {
	if key == r.failKey {
		return errors.New("injected failure")
	}
	r.puts = append(r.puts, key)
	return r.Store.Put(ctx, key, body)
}

func TestUpload(t *testing.T) {
	ctx := context.Background()
	files := map[string][]byte{"summary.json": []byte("s"), "omb-result.json": []byte("o"), "repeat-1/summary.json": []byte("r"), "report.html": []byte("h")}
	dir, err := Open(ctx, Location{Kind: KindDir, Dir: t.TempDir()}, S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recording{Store: dir, failKey: "runs/ns/r/1/repeat-1/summary.json"} // second in sorted order
	err = Upload(ctx, r, "runs/ns/r/1", files)
	want := "upload to " + dir.String() + " stopped at runs/ns/r/1/repeat-1/summary.json (1 of 4 files written): injected failure"
	if err == nil || err.Error() != want {
		t.Errorf("Upload = %v, want %q", err, want)
	}
	if w := []string{"runs/ns/r/1/omb-result.json"}; !reflect.DeepEqual(r.puts, w) {
		t.Errorf("Upload put %q before the failure, want %q (sorted)", r.puts, w)
	}
	// The retry writes the rest and finds the first two as they were.
	r.failKey, r.puts = "", nil
	if err := Upload(ctx, r, "runs/ns/r/1", files); err != nil {
		t.Fatalf("retried Upload: %v", err)
	}
	if len(r.puts) != 4 {
		t.Errorf("retried Upload put %q, want all four", r.puts)
	}
}

// TestUploadDirFetch copies a results directory into each kind of store
// and back out.
func TestUploadDirFetch(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	files := map[string]string{
		"summary.json":                     `{"ok":true}`,
		"omb-result.json":                  `{}`,
		"repeat-1/summary.json":            "r1",
		"repeat-1/histograms/publish.hgrm": "h",
		"report.html":                      "<html></html>",
	}
	for name, body := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not a regular file: left out.
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	run := RunPath("ns", "r", time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t)
			n, err := UploadDir(ctx, s, run, src)
			if err != nil || n != len(files) {
				t.Fatalf("UploadDir = %d, %v, want %d files", n, err, len(files))
			}
			// Another run beside it is not fetched with it.
			if err := s.Put(ctx, run+"x/summary.json", []byte("other")); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "fetched")
			n, err = Fetch(ctx, s, run, dst)
			if err != nil || n != len(files) {
				t.Fatalf("Fetch = %d, %v, want %d files", n, err, len(files))
			}
			got := map[string]string{}
			err = filepath.WalkDir(dst, func(p string, e os.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dst, p)
				got[filepath.ToSlash(rel)] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, files) {
				t.Errorf("fetched %v, want %v", got, files)
			}
			// Again into the same directory: nothing changes.
			if n, err := Fetch(ctx, s, run, dst); err != nil || n != len(files) {
				t.Errorf("second Fetch = %d, %v", n, err)
			}
			// A file there with other bytes is not replaced.
			if err := os.WriteFile(filepath.Join(dst, "summary.json"), []byte("edited"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Fetch(ctx, s, run, dst); !errors.Is(err, ErrExists) {
				t.Errorf("Fetch over an edited file = %v, want ErrExists", err)
			}
		})
	}
}

// extraKeys is a store whose List also has keys its server could not
// hold: versitygw's posix backend cleans "a/../b" to "b" and refuses
// "../b" (400), as a file system must, but AWS S3 stores both as
// they are.
type extraKeys struct {
	Store
	extra []string
}

func (e extraKeys) List(ctx context.Context, prefix string) ([]string, error) {
	keys, err := e.Store.List(ctx, prefix)
	keys = append(keys, e.extra...)
	sort.Strings(keys)
	return keys, err
}

func (e extraKeys) Get(ctx context.Context, key string) ([]byte, error) {
	for _, x := range e.extra {
		if key == x {
			return []byte("escaped"), nil
		}
	}
	return e.Store.Get(ctx, key)
}

func TestFetchRefusesEscapingKeys(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"runs/r/../../x", "runs/r//etc/cron.d/x", "runs/r/a/../../../x"} {
		src, err := Open(ctx, Location{Kind: KindDir, Dir: t.TempDir()}, S3Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Put(ctx, "runs/r/summary.json", []byte("s")); err != nil {
			t.Fatal(err)
		}
		parent := t.TempDir()
		dst := filepath.Join(parent, "fetched")
		n, err := Fetch(ctx, extraKeys{src, []string{bad}}, "runs/r", dst)
		if err == nil || n != 0 || !strings.Contains(err.Error(), "refused, nothing written: object "+`"`+bad+`"`) {
			t.Errorf("Fetch with %q = %d, %v, want it refused", bad, n, err)
		}
		// Not even the good file: nothing at all.
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("Fetch with %q wrote %v", bad, entries)
		}
	}
}

// TestS3ListSkipsFolders: a folder marker (an empty object whose name
// ends in '/', as consoles create) is not a key.
func TestS3ListSkipsFolders(t *testing.T) {
	endpoint, ak, sk, bucket := archivetest.Start(t)
	ctx := context.Background()
	if _, err := archivetest.NewClient(endpoint).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/runs/")}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, Location{Kind: KindS3, Bucket: bucket, Prefix: "p"}, S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: ak, SecretAccessKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "runs/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.List(ctx, ""); err != nil || !reflect.DeepEqual(keys, []string{"runs/x"}) {
		t.Errorf("List = %q, %v, want only runs/x", keys, err)
	}
}
