package archive

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "archive")
	s, err := Open(ctx, Location{Kind: KindDir, Dir: root}, S3Options{})
	if err != nil {
		t.Fatalf("Open of a directory not made yet: %v", err)
	}
	if keys, err := s.List(ctx, ""); err != nil || keys != nil {
		t.Errorf("List before the first Put = %q, %v, want none", keys, err)
	}
	if err := s.Put(ctx, "runs/a/summary.json", []byte("s")); err != nil {
		t.Fatal(err)
	}
	// What a crash in Put leaves, and what is no file: never listed.
	if err := os.WriteFile(filepath.Join(root, "runs", "a", tempMark+"123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "runs", "etc")); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.List(ctx, ""); err != nil || !reflect.DeepEqual(keys, []string{"runs/a/summary.json"}) {
		t.Errorf("List = %q, %v, want only runs/a/summary.json", keys, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "runs", "a", "summary.json")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode is %v (%v), want 0644", fi.Mode(), err)
	}
	// S3 would hold both; a directory cannot.
	err = s.Put(ctx, "runs/a/summary.json/x", []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "a directory store cannot hold a key and keys under it") {
		t.Errorf("Put under a key = %v", err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Location{Kind: KindDir, Dir: file}, S3Options{})
	if err == nil || !strings.Contains(err.Error(), "is a file, not a directory") {
		t.Errorf("Open of a file = %v", err)
	}
}
