package main

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestBuildsWithKoOffline builds the pause command with the real ko (bin/ko,
// make ko) against the in-process base registry, and checks what ctr and
// the pods rely on: the image name annotation, the nonroot user, the labels
// with version and commit, and ko's entrypoint.
func TestBuildsWithKoOffline(t *testing.T) {
	ko := os.Getenv("KO")
	if ko == "" {
		ko, _ = filepath.Abs("../../../bin/ko")
	}
	if _, err := os.Stat(ko); err != nil {
		t.Skipf("no ko at %s: run make ko (or set KO)", ko)
	}
	out := filepath.Join(t.TempDir(), "pause.tar")
	root, _ := filepath.Abs("../../..")
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	err := run(context.Background(), options{ko: ko, importPath: "./hack/local-cluster/pause", image: "docker.io/streambench/pause:test",
		out: out, user: "65532:65532", arch: "amd64", version: "v9.9.9", commit: "abc123"})
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if err := untar(out, dir); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index: %v %+v", err, m)
	}
	if got := m.Manifests[0].Annotations["io.containerd.image.name"]; got != "docker.io/streambench/pause:test" {
		t.Fatalf("io.containerd.image.name = %q", got)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("user %q, platform %s/%s", cfg.Config.User, cfg.OS, cfg.Architecture)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/ko-app/pause" {
		t.Errorf("entrypoint %v", cfg.Config.Entrypoint)
	}
	if cfg.Config.Labels["org.opencontainers.image.version"] != "v9.9.9" || cfg.Config.Labels["org.opencontainers.image.revision"] != "abc123" {
		t.Errorf("labels %v", cfg.Config.Labels)
	}
}

func untar(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			return err
		}
	}
}
