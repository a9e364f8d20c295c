package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestBuildsFromABaseAndFiles builds an image from a tiny root file system
// tarball and a folder, unpacks the OCI tarball it writes, and checks what
// ctr and the pods rely on: the name annotation, the base layer kept as it
// is (so images on one root file system share it), the added files at
// their destination with their mode, and the configuration.
func TestBuildsFromABaseAndFiles(t *testing.T) {
	dir := t.TempDir()
	var base bytes.Buffer
	tw := tar.NewWriter(&base)
	for _, f := range []struct{ name, data string }{{"etc/os-release", "ID=debian\n"}, {"bin/sh", "#!"}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.data))
	}
	tw.Close()
	baseTar := filepath.Join(dir, "rootfs.tar")
	if err := os.WriteFile(baseTar, base.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "scripts")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "run.sh"), []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	o := options{base: baseTar, image: "quay.io/example/app:1.0", out: out, workdir: "/opt/app", user: "1001", arch: "amd64",
		adds: repeated{src + "=/opt/app/bin"}, env: repeated{"APP_HOME=/opt/app"}, entrypoint: repeated{"/opt/app/bin/sub/run.sh"}}
	if err := run(o); err != nil {
		t.Fatal(err)
	}

	unpacked := filepath.Join(dir, "layout")
	untar(t, out, unpacked)
	p, err := layout.FromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := p.ImageIndex()
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index: %v, %d manifests", err, len(m.Manifests))
	}
	if got := m.Manifests[0].Annotations["io.containerd.image.name"]; got != o.image {
		t.Errorf("io.containerd.image.name = %q, want %q", got, o.image)
	}
	img, _ := idx.Image(m.Manifests[0].Digest)
	layers, _ := img.Layers()
	if len(layers) != 2 {
		t.Fatalf("%d layers, want the base and the added files", len(layers))
	}
	rc, _ := layers[0].Uncompressed()
	got, _ := io.ReadAll(rc)
	if !bytes.Equal(got, base.Bytes()) {
		t.Error("the base layer is not the root file system tarball as it was")
	}
	rc, _ = layers[1].Uncompressed()
	tr := tar.NewReader(rc)
	files := map[string]int64{}
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		files[h.Name] = h.Mode
	}
	if mode, ok := files["opt/app/bin/sub/run.sh"]; !ok || mode != 0o755 {
		t.Errorf("added layer: %v; want opt/app/bin/sub/run.sh with mode 0755", files)
	}
	for _, d := range []string{"opt/", "opt/app/", "opt/app/bin/"} {
		if _, ok := files[d]; !ok {
			t.Errorf("added layer lacks the parent directory %s: %v", d, files)
		}
	}
	cfg, _ := img.ConfigFile()
	if cfg.Config.User != "1001" || cfg.Config.WorkingDir != "/opt/app" || len(cfg.Config.Entrypoint) != 1 || cfg.Architecture != "amd64" {
		t.Errorf("config %+v", cfg.Config)
	}
	if len(cfg.Config.Env) != 2 || cfg.Config.Env[1] != "APP_HOME=/opt/app" {
		t.Errorf("env %v, want PATH and APP_HOME", cfg.Config.Env)
	}
}

func TestRefusesShortNamesAndBadAdds(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "rootfs.tar")
	os.WriteFile(base, nil, 0o644)
	if err := run(options{base: base, image: "app:1.0", out: filepath.Join(dir, "x.tar")}); err == nil {
		t.Error("a short image name was accepted; containerd's CRI would not find it")
	}
	if err := run(options{base: base, image: "quay.io/a/b:1", out: filepath.Join(dir, "x.tar"), adds: repeated{"nodest"}}); err == nil {
		t.Error("-add without =DEST was accepted")
	}
}

func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(target, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(target), 0o755)
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
