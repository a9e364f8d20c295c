// Command fsimage assembles a container image from a root file system
// tarball and local files, with no Docker and no registry, as an OCI
// tarball that `ctr -n k8s.io images import` loads under the given name.
//
//	fsimage -base bin/images/rootfs-jre.tar \
//	  -add path/to/lib=/opt/strimzi/lib -add scripts=/opt/strimzi/bin \
//	  -env STRIMZI_HOME=/opt/strimzi -workdir /opt/strimzi -user 1001 \
//	  -image quay.io/strimzi/operator:0.49.1 -out bin/images/strimzi-operator.tar
//
// The base tarball is one layer, as it is, so every image built on the same
// root file system shares it in containerd; the added files are a second
// layer. Added files keep their mode, belong to root (uid 0, gid 0, as the
// images that run as 1001 in group 0 expect: group bits decide), and have a
// fixed time, so the same inputs give the same image digest.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/streambench/streambench-operator/hack/imagetar"
)

// repeated is a flag given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

type options struct {
	base, image, out, workdir, user, arch string
	adds, env, entrypoint, cmd, labels    repeated
}

func main() {
	var o options
	flag.StringVar(&o.base, "base", "", "root file system tarball, the first layer (required)")
	flag.Var(&o.adds, "add", "SRC=DEST: a file or directory put at DEST in the image (repeatable)")
	flag.Var(&o.env, "env", "KEY=VALUE of the image's environment (repeatable; PATH has a default)")
	flag.Var(&o.entrypoint, "entrypoint", "one word of the entrypoint (repeatable, in order)")
	flag.Var(&o.cmd, "cmd", "one word of the default command (repeatable, in order)")
	flag.Var(&o.labels, "label", "KEY=VALUE label of the image (repeatable)")
	flag.StringVar(&o.workdir, "workdir", "/", "working directory")
	flag.StringVar(&o.user, "user", "0", "user (uid or uid:gid) the image runs as")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "architecture of the image (linux)")
	flag.StringVar(&o.image, "image", "", "fully qualified image name, e.g. quay.io/strimzi/operator:0.49.1 (required)")
	flag.StringVar(&o.out, "out", "", "tarball to write (required)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "fsimage:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.base == "" || o.image == "" || o.out == "" {
		return errors.New("-base, -image and -out are required")
	}
	if _, err := imagetar.Ref(o.image); err != nil {
		return fmt.Errorf("-image: %w", err)
	}
	img, err := build(o)
	if err != nil {
		return err
	}
	return imagetar.Write(img, o.image, o.out)
}

// epoch is the time of every added file and of the image.
var epoch = time.Unix(0, 0)

func build(o options) (v1.Image, error) {
	if _, err := os.Stat(o.base); err != nil {
		return nil, fmt.Errorf("-base: %w", err)
	}
	base, err := tarball.LayerFromFile(o.base, tarball.WithMediaType(types.OCILayer),
		// The root file system is hundreds of MB; the fastest gzip keeps
		// the build to seconds on two cores.
		tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, fmt.Errorf("-base %s: %w", o.base, err)
	}
	layers := []v1.Layer{base}
	if len(o.adds) > 0 {
		data, err := addLayer(o.adds)
		if err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	for _, e := range o.env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-env %q: want KEY=VALUE", e)
		}
		if k == "PATH" {
			env = env[1:]
		}
		env = append(env, e)
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-label %q: want KEY=VALUE", l)
		}
		labels[k] = v
	}
	return imagetar.Image(layers, o.arch, v1.Config{
		User:       o.user,
		WorkingDir: o.workdir,
		Env:        env,
		Entrypoint: o.entrypoint,
		Cmd:        o.cmd,
		Labels:     labels,
	})
}

// addLayer is the tar of the -add files: each SRC (file or directory, whose
// contents are copied recursively) at DEST, with the parent directories of
// every DEST.
func addLayer(adds []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mkdirs := func(p string) error {
		var parents []string
		for d := path.Dir(p); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		sort.Strings(parents)
		for _, d := range parents {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range adds {
		src, dest, ok := strings.Cut(a, "=")
		if !ok || src == "" || !strings.HasPrefix(dest, "/") {
			return nil, fmt.Errorf("-add %q: want SRC=DEST with an absolute DEST", a)
		}
		dest = path.Clean(dest)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			target := path.Join(dest, filepath.ToSlash(rel))
			if err := mkdirs(target); err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			h := &tar.Header{Name: strings.TrimPrefix(target, "/"), Mode: int64(info.Mode().Perm()), ModTime: epoch}
			switch {
			case d.IsDir():
				if dirs[target] {
					return nil
				}
				dirs[target] = true
				h.Name += "/"
				h.Typeflag = tar.TypeDir
				return tw.WriteHeader(h)
			case info.Mode()&fs.ModeSymlink != 0:
				link, err := os.Readlink(p)
				if err != nil {
					return err
				}
				h.Typeflag, h.Linkname = tar.TypeSymlink, link
				return tw.WriteHeader(h)
			case info.Mode().IsRegular():
				h.Typeflag, h.Size = tar.TypeReg, info.Size()
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = io.Copy(tw, f)
				return err
			default:
				return fmt.Errorf("-add %s: %s is neither a file, a directory nor a symlink", src, p)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("-add %q: %w", a, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
