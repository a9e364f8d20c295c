// Package archivetest runs a real S3-compatible server for tests: Versity's
// versitygw over a temporary directory (its posix backend), built from the
// pinned module hack/tools/versitygw by hack/versitygw-binary.sh. The
// archive's own tests use it, and so can the controller's envtest suite
// and the e2e suite, for a run's spec.results.archive.
package archivetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The root account of every gateway Start runs, and its one bucket.
const (
	AccessKey = "streambench-test"
	SecretKey = "streambench-test-secret"
	Bucket    = "archive-test"
)

// T is what Start needs of a test: a *testing.T, or Ginkgo's GinkgoT(),
// which is no testing.TB (the envtest and e2e suites are Ginkgo's).
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	TempDir() string
	Cleanup(func())
	Failed() bool
}

var _ T = testing.TB(nil)

// Start runs a versitygw on a free loopback port with its own empty
// directory and a bucket, stopped when the test ends, and says where it
// is (endpoint, as http://127.0.0.1:<port>) and how to sign in. The
// binary is $VERSITYGW_BIN, or what hack/versitygw-binary.sh prints
// (built on first use, a few minutes cold; cached in bin/versitygw/), so
// the test runs wherever it runs and never skips.
func Start(t T) (endpoint, accessKey, secretKey, bucket string) {
	t.Helper()
	return StartOn(t, "127.0.0.1")
}

// StartOn is Start listening on host (an address of this machine), for
// clients elsewhere: the e2e suite's pods reach the host's address, not
// its loopback.
func StartOn(t T, host string) (endpoint, accessKey, secretKey, bucket string) {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	// The port is one the kernel just gave (listening on :0), so free a
	// moment ago, from the ephemeral range, apart from the ports
	// internal/localbrokers hands out below it. It may be taken before
	// versitygw binds it; versitygw then exits, and another port is
	// tried.
	var lastErr error
	for attempt := 1; attempt <= 5; attempt++ {
		addr, err := freeAddr(host)
		if err != nil {
			t.Fatal(err)
		}
		endpoint = "http://" + addr
		lastErr = start(t, bin, filepath.Join(dir, strconv.Itoa(attempt)), addr, endpoint)
		if lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("versitygw did not start: %v", lastErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := NewClient(endpoint).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("versitygw at %s: create bucket %s: %v", endpoint, Bucket, err)
	}
	return endpoint, AccessKey, SecretKey, Bucket
}

// start runs the gateway on addr with its root and log under dir and
// waits until it answers; an error when it exits first (the port was
// taken) or does not answer in 30 s.
func start(t T, bin, dir, addr, endpoint string) error {
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "versitygw.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey,
		"--port", addr, "--quiet", "posix", root)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tail := func() string {
		b, _ := os.ReadFile(logPath)
		return strings.TrimSpace(string(b))
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("versitygw on %s exited (%v) before it answered:\n%s", addr, err, tail())
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("versitygw on %s did not answer in 30 s:\n%s", addr, tail())
		case <-time.After(50 * time.Millisecond):
		}
		// Any answer will do (unsigned, it is 403 Access Denied): the
		// server is up.
		resp, err := http.Get(endpoint + "/")
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
			if t.Failed() {
				t.Logf("versitygw at %s, its log:\n%s", endpoint, tail())
			}
		})
		return nil
	}
}

// freeAddr is host and a port free on it a moment ago.
func freeAddr(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("no free port on %s: %w", host, err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// NewClient is an S3 client of the gateway at endpoint, signed in as its
// root account, for what a test does past the archive's Store (an object
// with a name Store.Put refuses).
func NewClient(endpoint string) *s3.Client {
	return s3.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
}

var binary struct {
	sync.Mutex
	path string
}

// Binary is the versitygw to run: $VERSITYGW_BIN, or the one
// hack/versitygw-binary.sh builds, found from the test's directory up.
func Binary(t T) string {
	t.Helper()
	if p := os.Getenv("VERSITYGW_BIN"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Fatalf("VERSITYGW_BIN=%s is no versitygw binary (%v): fix it, or unset it and hack/versitygw-binary.sh builds one", p, err)
		}
		return p
	}
	binary.Lock()
	defer binary.Unlock()
	if binary.path != "" {
		return binary.path
	}
	script, err := findScript()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v (set VERSITYGW_BIN to a versitygw binary to skip the build)", script, err)
	}
	binary.path = strings.TrimSpace(string(out))
	return binary.path
}

// findScript is hack/versitygw-binary.sh in the working directory or the
// nearest one above it (go test runs a test in its package's directory).
func findScript() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "hack", "versitygw-binary.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no hack/versitygw-binary.sh in %s or above it: run the test inside the streambench repository, or set VERSITYGW_BIN", wd)
		}
	}
}
