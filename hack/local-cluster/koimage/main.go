// Command koimage builds a Go command into an OCI image tarball with ko, with
// no registry and no Docker: `ctr -n k8s.io images import` loads the tarball
// into the local cluster's containerd.
//
// ko takes its base image from a registry (or a Docker daemon); neither is
// reachable here, so koimage makes the base itself — what distroless
// static:nonroot provides a static Go binary: /etc/passwd and /etc/group with
// the nonroot user 65532, its home, /tmp; no CA certificates — serves it from
// an in-process registry on 127.0.0.1 (go-containerregistry's pkg/registry;
// ko talks plain HTTP to loopback registries), and runs ko with
// KO_DEFAULTBASEIMAGE pointing there. ko writes an OCI layout; koimage packs
// it as a tarball whose index carries the io.containerd.image.name
// annotation, by which ctr names the imported image. The name must be fully
// qualified (docker.io/...): the CRI normalizes the image names of pods and
// would not find a short name such as local/x:1.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/streambench/streambench-operator/hack/imagetar"
)

type options struct {
	ko, importPath, image, out, user, arch string
	version, commit                        string
}

func main() {
	var o options
	flag.StringVar(&o.ko, "ko", "ko", "the ko binary (make ko installs the pinned one into bin/)")
	flag.StringVar(&o.importPath, "path", "./cmd/streambench", "Go package to build")
	flag.StringVar(&o.image, "image", "", "fully qualified image name, e.g. docker.io/streambench/streambench:e2e (required)")
	flag.StringVar(&o.out, "out", "", "tarball to write (required)")
	flag.StringVar(&o.user, "user", "65532:65532", "uid:gid the image runs as")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "architecture of the image (linux)")
	flag.StringVar(&o.version, "version", "", "the version the binary and the image label say (make version; required)")
	flag.StringVar(&o.commit, "commit", "", "the commit the binary and the image label say (required)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "koimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.image == "" || o.out == "" || o.version == "" || o.commit == "" {
		return fmt.Errorf("-image, -out, -version and -commit are required")
	}
	ref, err := imagetar.Ref(o.image)
	if err != nil {
		return fmt.Errorf("-image: %w", err)
	}
	baseRef, stop, err := serveBase(o)
	if err != nil {
		return err
	}
	defer stop()

	dir, err := os.MkdirTemp("", "koimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"build", o.importPath, "--push=false", "--bare", "--tags=" + ref.TagStr(),
		"--platform=linux/" + o.arch, "--sbom=none", "--oci-layout-path=" + dir}
	// The image says what the binary says (.ko.yaml's -X flags read
	// VERSION and COMMIT).
	args = append(args, "--image-label=org.opencontainers.image.version="+o.version+",org.opencontainers.image.revision="+o.commit)
	cmd := exec.CommandContext(ctx, o.ko, args...)
	cmd.Env = append(os.Environ(), "KO_DEFAULTBASEIMAGE="+baseRef, "KO_DOCKER_REPO="+ref.Context().String(),
		"VERSION="+o.version, "COMMIT="+o.commit)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", o.ko, strings.Join(args, " "), err)
	}
	img, err := builtImage(dir)
	if err != nil {
		return err
	}
	return imagetar.Write(img, o.image, o.out)
}

// serveBase pushes the base image to an in-process registry on loopback and
// returns its reference and how to stop the registry.
func serveBase(o options) (string, func(), error) {
	img, err := base(o)
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	stop := func() { _ = srv.Close() }
	baseRef := l.Addr().String() + "/streambench/base:nonroot"
	ref, err := name.NewTag(baseRef)
	if err != nil {
		stop()
		return "", nil, err
	}
	if err := remote.Write(ref, img); err != nil {
		stop()
		return "", nil, fmt.Errorf("pushing the base image to the in-process registry: %w", err)
	}
	return baseRef, stop, nil
}

// builtImage is the one image ko wrote into the layout.
func builtImage(dir string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
		if d.MediaType.IsIndex() {
			// One platform was built: the image inside the index.
			inner, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			im, err := inner.IndexManifest()
			if err != nil {
				return nil, err
			}
			if len(im.Manifests) == 1 {
				return inner.Image(im.Manifests[0].Digest)
			}
		}
	}
	return nil, fmt.Errorf("ko wrote no single image into %s", dir)
}

// base is the base image: the files a static binary running as nonroot
// expects, and the user; ko adds the binary as its own layer.
func base(o options) (v1.Image, error) {
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
	return imagetar.Image([]v1.Layer{layer}, o.arch, v1.Config{
		User:       o.user,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"},
	})
}
