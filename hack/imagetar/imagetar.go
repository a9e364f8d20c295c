// Package imagetar writes a container image as a tarball that
// `ctr -n k8s.io images import` loads under a given name: an OCI image layout
// whose index carries the io.containerd.image.name annotation (ctr names the
// imported image by it). The name must be fully qualified (docker.io/...,
// quay.io/...): the CRI normalizes the image names of pods and would not
// find a short name.
package imagetar

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Ref parses a fully qualified image name, or says how to give one.
func Ref(image string) (name.Tag, error) {
	ref, err := name.NewTag(image, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image %q: %w (give registry/repository:tag, e.g. docker.io/streambench/streambench:e2e)", image, err)
	}
	if !strings.Contains(strings.SplitN(image, "/", 2)[0], ".") {
		return name.Tag{}, fmt.Errorf("image %q: give the registry too (docker.io/...): containerd's CRI normalizes short names and would not find the image", image)
	}
	return ref, nil
}

// Image is an OCI image of the layers, in order, for linux/arch, with config
// as its runtime configuration and the Unix epoch as its creation time (the
// same inputs give the same digest).
func Image(layers []v1.Layer, arch string, config v1.Config) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		var err error
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer}); err != nil {
			return nil, err
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: time.Unix(0, 0)}
	cfg.Config = config
	return mutate.ConfigFile(img, cfg)
}

// Write writes img as an OCI layout tarball named image (as given: a
// name.Tag would spell docker.io as index.docker.io) to out, through a
// temporary file, so a failed write leaves no half tarball behind.
func Write(img v1.Image, image string, out string) error {
	ref, err := Ref(image)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "imagetar-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          image,
		"org.opencontainers.image.ref.name": ref.TagStr(),
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
