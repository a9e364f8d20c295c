package localbrokers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJava writes a java into dir that prints sample as a JVM prints its
// properties and version (to stderr).
func fakeJava(t *testing.T, dir, sample string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "javaruntime", "testdata", sample))
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexec /bin/cat >&2 <<'EOF'\n" + string(b) + "EOF\n"
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestBrokerJava: the java on PATH is the brokers' (StartJVM's LookPath),
// read once per binary, and read again when that binary changes.
func TestBrokerJava(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	ctx := context.Background()
	if _, err := BrokerJava(ctx); err == nil || !strings.Contains(err.Error(), "java") {
		t.Errorf("no java on PATH: %v, want the error that says what to install", err)
	}

	fakeJava(t, dir, "java21-debian.txt")
	rt, err := BrokerJava(ctx)
	if err != nil || rt.Major != 21 || rt.Version != "21.0.13.1+2-1-deb13u1-Debian" {
		t.Fatalf("BrokerJava = %+v, %v; want the Java 21 on PATH", rt, err)
	}
	// Cached: the same binary is not started again (a java that would now
	// fail is not run).
	key := javaKey{path: filepath.Join(dir, "java")}
	fi, _ := os.Stat(key.path)
	key.size, key.mtime = fi.Size(), fi.ModTime()
	javaCache.Lock()
	_, cached := javaCache.m[key]
	javaCache.Unlock()
	if !cached {
		t.Errorf("the runtime of %s is not cached", key.path)
	}
	if again, err := BrokerJava(ctx); err != nil || *again != *rt {
		t.Errorf("second read %+v, %v; want the first", again, err)
	}

	// A JDK upgraded in place is a changed file: read anew.
	time.Sleep(10 * time.Millisecond)
	fakeJava(t, dir, "java17-debian.txt")
	if rt, err := BrokerJava(ctx); err != nil || rt.Major != 17 {
		t.Errorf("after the upgrade: %+v, %v; want Java 17", rt, err)
	}
}

// A java that prints no version is recorded as unknown, with why, and
// the start goes on.
func TestReadJavaFailure(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte("#!/bin/sh\necho 'Error: Could not create the Java Virtual Machine.' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var s Setup
	var said []string
	s.readJava(context.Background(), func(f string, a ...any) { said = append(said, f) })
	if s.Java != nil || !strings.Contains(s.JavaError, "Could not create the Java Virtual Machine") || len(said) != 1 {
		t.Errorf("setup %+v, said %q: want no runtime and the JVM's error", s, said)
	}
}
