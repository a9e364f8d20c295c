// Command ociimage packs one static binary as an OCI image tarball that
// `ctr -n k8s.io images import` loads into containerd, so the local cluster
// runs our images without Docker or a registry.
//
// The tarball is an OCI image layout whose index carries the
// io.containerd.image.name annotation: ctr names the imported image by it.
// The name must be fully qualified (docker.io/...): the CRI normalizes the
// image names of pods and would not find a short name such as local/x:1.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type options struct {
	binary, image, entrypoint, user, out string
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "static binary to pack (required)")
	flag.StringVar(&o.image, "image", "", "fully qualified image name, e.g. docker.io/streambench/streambench:e2e (required)")
	flag.StringVar(&o.entrypoint, "entrypoint", "", "path of the binary in the image (default /<binary name>)")
	flag.StringVar(&o.user, "user", "65532:65532", "uid:gid the image runs as")
	flag.StringVar(&o.out, "out", "", "tarball to write (required)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.binary == "" || o.image == "" || o.out == "" {
		return fmt.Errorf("-binary, -image and -out are required")
	}
	ref, err := name.NewTag(o.image, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("-image %q: %w (give registry/repository:tag, e.g. docker.io/streambench/streambench:e2e)", o.image, err)
	}
	if !strings.Contains(strings.SplitN(o.image, "/", 2)[0], ".") {
		return fmt.Errorf("-image %q: give the registry too (docker.io/...): containerd's CRI normalizes short names and would not find the image", o.image)
	}
	if o.entrypoint == "" {
		o.entrypoint = "/" + filepath.Base(o.binary)
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return err
	}
	img, err := image(bin, o)
	if err != nil {
		return err
	}
	return writeLayoutTar(img, o.image, ref.TagStr(), o.out)
}

// image is one layer with the binary, a passwd entry for the non-root user
// (some libraries look up the home directory) and a world-writable /tmp.
func image(bin []byte, o options) (v1.Image, error) {
	uid, gid, _ := strings.Cut(o.user, ":")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mod := time.Unix(0, 0)
	files := []struct {
		name string
		mode int64
		data []byte
		dir  bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:" + uid + ":" + gid + ":nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:" + gid + ":\n")},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: strings.TrimPrefix(o.entrypoint, "/"), mode: 0o755, data: bin},
	}
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: mod, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if f.name == "home/nonroot/" {
			fmt.Sscan(uid, &h.Uid)
			fmt.Sscan(gid, &h.Gid)
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: mod}
	cfg.Config = v1.Config{
		Entrypoint: []string{o.entrypoint},
		User:       o.user,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"},
	}
	return mutate.ConfigFile(img, cfg)
}

// writeLayoutTar writes an OCI image layout for img and tars it into out.
func writeLayoutTar(img v1.Image, imageName, tag, out string) error {
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          imageName,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}
