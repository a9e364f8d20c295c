package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Images are built without Docker or a registry, as OCI tarballs, and
// imported into every node's containerd (pods run imported images only:
// imagePullPolicy Never or IfNotPresent).

func (c *Cluster) imagesDir() string { return filepath.Join(c.State, "images") }

// koimage builds a Go command into an OCI image tarball with ko (bin/ko,
// pinned by the Makefile's KO_VERSION), from a base image it serves itself.
func (c *Cluster) koimage() (string, error) {
	tool := filepath.Join(c.imagesDir(), "koimage")
	if stale(tool, filepath.Join(c.Root, "hack", "local-cluster", "koimage")) {
		cmd := exec.Command("go", "build", "-o", tool, "./hack/local-cluster/koimage")
		cmd.Dir, cmd.Stderr = c.Root, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("go build ./hack/local-cluster/koimage: %w", err)
		}
	}
	if !exists(filepath.Join(c.Root, "bin", "ko")) {
		cmd := exec.Command("make", "--no-print-directory", "ko")
		cmd.Dir = c.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("could not install ko (make ko): %s", lastLines(string(out), 5))
		}
	}
	return tool, nil
}

// stale says whether bin is missing or older than a Go file under dir.
func stale(bin, dir string) bool {
	st, err := os.Stat(bin)
	if err != nil {
		return true
	}
	newer := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(st.ModTime()) {
			newer = true
		}
		return nil
	})
	return newer
}

// BuildImage runs ko from the repository root, where .ko.yaml is, with the
// Makefile's version and commit.
func (c *Cluster) BuildImage(pkg, image, tarball string) error {
	tool, err := c.koimage()
	if err != nil {
		return err
	}
	cmd := exec.Command("make", "--no-print-directory", "-s", "version")
	cmd.Dir = c.Root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("make version: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return fmt.Errorf("make version printed %q, not a version and a commit", out)
	}
	if err := os.MkdirAll(filepath.Dir(tarball), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(c.imagesDir(), "ko.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	ko := exec.Command(tool, "-ko", filepath.Join(c.Root, "bin", "ko"), "-path", pkg, "-image", image, "-version", f[0], "-commit", f[1], "-out", tarball)
	ko.Dir, ko.Stderr = c.Root, log
	if err := ko.Run(); err != nil {
		return fmt.Errorf("ko could not build %s (see %s): %w", image, logPath, err)
	}
	return nil
}

// importImage imports a tarball into node n's containerd.
func importImage(n Node, tarball string) error {
	if _, err := ctr(n, "images", "import", tarball); err != nil {
		return fmt.Errorf("containerd of node %s: could not import %s: %w", n.Name, tarball, err)
	}
	return nil
}

// importEverywhere imports a tarball into every node's containerd, all at
// once: one after another, N nodes would make every image load N times as
// long.
func (c *Cluster) importEverywhere(tarball string) error {
	for _, n := range c.Nodes {
		if !c.Alive(n.ContainerdPart()) {
			return fmt.Errorf("containerd of node %s is not running; start the cluster with: hack/local-cluster/local-cluster.sh up", n.Name)
		}
	}
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = importImage(n, tarball)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// loadPause imports the pod sandbox image into node n (built once).
func (c *Cluster) loadPause(n Node) error {
	tar := filepath.Join(c.imagesDir(), "pause.tar")
	if !exists(tar) {
		if err := c.BuildImage("./hack/local-cluster/pause", PauseImage, tar); err != nil {
			return err
		}
	}
	return importImage(n, tar)
}

// LoadImage builds the streambench image and imports it into every node.
func (c *Cluster) LoadImage() error {
	if err := NeedRoot(); err != nil {
		return err
	}
	Logf("building %s with ko (no Docker, no registry)", c.Image)
	tar := filepath.Join(c.imagesDir(), "streambench.tar")
	if err := c.BuildImage("./cmd/streambench", c.Image, tar); err != nil {
		return err
	}
	if err := c.importEverywhere(tar); err != nil {
		return err
	}
	Logf("imported %s into %s", c.Image, nodeList(c.Nodes))
	return nil
}

// LoadStrimzi builds Strimzi's operator and Kafka images from source
// (hack/images/strimzi.sh; cached after the first build) and imports them
// under the names Strimzi's install files use.
func (c *Cluster) LoadStrimzi() error {
	dir, err := c.imageScript("strimzi.sh")
	if err != nil {
		return err
	}
	tars, _ := filepath.Glob(filepath.Join(dir, "images", "*.tar"))
	if len(tars) == 0 {
		return fmt.Errorf("hack/images/strimzi.sh made no image in %s/images", dir)
	}
	t0 := time.Now()
	for _, t := range tars {
		if err := c.importEverywhere(t); err != nil {
			return err
		}
	}
	Logf("imported Strimzi's images (%d) into %s in %s; its install files: %s/dist/install, the same as testdata/upstream/strimzi-1.2.0",
		len(tars), nodeList(c.Nodes), time.Since(t0).Round(time.Second), dir)
	return nil
}

// LoadPulsar builds the Pulsar image (hack/images/pulsar.sh; cached) and
// imports it under the name the Apache Pulsar chart uses for
// spec.cluster.managed.version 4.0.7.
func (c *Cluster) LoadPulsar() error {
	dir, err := c.imageScript("pulsar.sh")
	if err != nil {
		return err
	}
	if err := c.importEverywhere(filepath.Join(dir, "image.tar")); err != nil {
		return err
	}
	Logf("imported the Pulsar image (%s/image.tar) into %s", dir, nodeList(c.Nodes))
	return nil
}

// imageScript runs a hack/images script, which prints its output directory.
func (c *Cluster) imageScript(name string) (string, error) {
	if err := NeedRoot(); err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(c.Root, "hack", "images", name))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/images/%s could not build its images: %w", name, err)
	}
	return strings.TrimSpace(lastLines(string(out), 1)), nil
}
