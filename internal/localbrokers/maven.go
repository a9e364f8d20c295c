// Package localbrokers starts real Kafka and Pulsar brokers as local JVM
// processes from Maven Central jars, for the tests, the hack/ scripts and
// `streambench run --local`. Every process is stopped by its own pid.
package localbrokers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Artifact is a Maven coordinate groupId:artifactId:version.
type Artifact string

func (a Artifact) parts() (group, artifact, version string, err error) {
	p := strings.Split(string(a), ":")
	if len(p) != 3 || p[0] == "" || p[1] == "" || p[2] == "" {
		return "", "", "", fmt.Errorf("maven artifact %q: want groupId:artifactId:version", a)
	}
	return p[0], p[1], p[2], nil
}

// CheckJava returns an error that says what to install when java or mvn is
// missing, instead of failing later with an obscure exec error.
func CheckJava() error {
	var missing []string
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s not found on PATH: local brokers run as JVM processes from Maven Central jars; install a JDK 17+ and Maven (e.g. apt-get install openjdk-17-jdk-headless maven)", strings.Join(missing, " and "))
	}
	return nil
}

// FetchJars resolves the artifacts and their runtime dependencies into
// dir/lib once, with Maven, and returns the lib directory. A marker file
// records the artifact list, so a changed list fetches again.
func FetchJars(ctx context.Context, dir string, artifacts ...Artifact) (string, error) {
	if err := CheckJava(); err != nil {
		return "", err
	}
	lib := filepath.Join(dir, "lib")
	marker := filepath.Join(dir, ".fetched")
	want := joinArtifacts(artifacts)
	if got, err := os.ReadFile(marker); err == nil && string(got) == want {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Test packages and the e2e suite's processes fetch into the same
	// cache at once on a new machine: one fetches, the others wait and
	// find its marker, instead of removing lib under a running broker.
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if got, err := os.ReadFile(marker); err == nil && string(got) == want {
		return lib, nil
	}
	var deps strings.Builder
	for _, a := range artifacts {
		g, n, v, err := a.parts()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&deps, "    <dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n", g, n, v)
	}
	pom := fmt.Sprintf(`<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.streambench.local</groupId>
  <artifactId>brokers</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
%s  </dependencies>
</project>
`, deps.String())
	pomPath := filepath.Join(dir, "pom.xml")
	if err := os.WriteFile(pomPath, []byte(pom), 0o644); err != nil {
		return "", err
	}
	_ = os.RemoveAll(lib)
	cmd := exec.CommandContext(ctx, "mvn", "-B", "-q", "-f", pomPath,
		// The plugin version is pinned (2.8, what Maven 3.8's super POM
		// binds): an unpinned goal resolves the newest release on the day.
		"org.apache.maven.plugins:maven-dependency-plugin:2.8:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+lib)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fetching %s with Maven failed (is Maven Central reachable?): %w\n%s", want, err, tail(out.String(), 4000))
	}
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		return "", err
	}
	return lib, nil
}

// lockDir takes an exclusive lock on dir/.lock, waiting for another
// process's as long as ctx lets it, and returns its release.
func lockDir(ctx context.Context, dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another process's fetch into %s: %w", dir, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Classpath is every jar of lib, for `java -cp`.
func Classpath(lib string) (string, error) {
	jars, err := filepath.Glob(filepath.Join(lib, "*.jar"))
	if err != nil {
		return "", err
	}
	if len(jars) == 0 {
		return "", errors.New("no jars in " + lib + ": delete its parent directory to fetch again")
	}
	return strings.Join(jars, string(os.PathListSeparator)), nil
}

// CacheDir is where fetched jars live: $STREAMBENCH_CACHE, else the user
// cache directory, else a temporary directory.
func CacheDir() string {
	if d := os.Getenv("STREAMBENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "streambench")
	}
	return filepath.Join(os.TempDir(), "streambench-cache")
}

func joinArtifacts(as []Artifact) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, "\n")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
