package localbrokers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Class data sharing: the first JVM of a set of jars and a main class
// writes the classes it loaded into an archive as it exits
// (-XX:ArchiveClassesAtExit), and every later JVM of the same jars and main
// class maps that archive (-XX:SharedArchiveFile) instead of reading,
// parsing and verifying each class from the jars again. The tests start
// the same Kafka and Pulsar JVMs dozens of times (cold run 16: 51 Kafka
// nodes, 51 runs of Kafka's storage tool, 16 Pulsar standalones), and on
// 2 cores every start's class loading is time the others wait for. What a
// JVM does once started is unchanged: an archive holds only the classes'
// parsed form, and a class missing from it is loaded from its jar as
// before. STREAMBENCH_JVM_CDS=off starts every JVM without one (for
// hack/bench-* comparisons).

// classArchives is where the archives are kept: beside the jars they are
// made from, so that a new jar cache starts without them.
func classArchives() string { return filepath.Join(CacheDir(), "cds") }

// classSharing is what one JVM start does about its class archive: the
// options it adds, and (for the JVM that writes the archive) what to do
// with the archive once the JVM has exited.
type classSharing struct {
	opts []string
	// exited keeps the written archive when the JVM ended as a JVM does
	// when it ends on purpose; nil when this JVM writes nothing.
	exited func(*os.ProcessState)
}

// end is called once the JVM has exited, with its state (nil when it did
// not start).
func (s classSharing) end(st *os.ProcessState) {
	if s.exited != nil {
		s.exited(st)
	}
}

// shareClasses decides the class archive of a JVM of java, classpath cp and
// main class main started with jvmArgs, kept in dir. A JVM that outlives
// this process (detached) only uses an archive: nobody would be there to
// keep the one it writes. Any failure means a JVM without an archive, as
// before: sharing is an optimisation, never a reason not to start.
func shareClasses(dir, java, cp, main string, jvmArgs []string, detached bool) classSharing {
	if os.Getenv("STREAMBENCH_JVM_CDS") == "off" {
		return classSharing{}
	}
	// A JVM with an agent (the monitoring test's JMX exporter) refuses to
	// start while writing an archive ("Must enable
	// AllowArchivingWithJavaAgent", a diagnostic option), and an archive
	// written without the agent's classes would serve it little: it goes
	// without.
	for _, a := range jvmArgs {
		if strings.HasPrefix(a, "-javaagent:") {
			return classSharing{}
		}
	}
	key, err := classArchiveKey(java, cp, main)
	if err != nil {
		return classSharing{}
	}
	final := filepath.Join(dir, key+".jsa")
	if _, err := os.Stat(final); err == nil {
		return classSharing{opts: []string{"-XX:SharedArchiveFile=" + final}}
	}
	if detached || os.MkdirAll(dir, 0o755) != nil {
		return classSharing{}
	}
	// One writer per archive: the others (parallel test processes start
	// the same brokers) go without until it is there.
	lock, err := os.OpenFile(final+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return classSharing{}
	}
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		lock.Close()
		return classSharing{}
	}
	if _, err := os.Stat(final); err == nil {
		lock.Close()
		return classSharing{opts: []string{"-XX:SharedArchiveFile=" + final}}
	}
	partial := final + ".partial"
	_ = os.Remove(partial)
	return classSharing{
		opts: []string{"-XX:ArchiveClassesAtExit=" + partial},
		exited: func(st *os.ProcessState) {
			defer lock.Close()
			if endedOnPurpose(st) {
				if fi, err := os.Stat(partial); err == nil && fi.Size() > 0 && os.Rename(partial, final) == nil {
					return
				}
			}
			_ = os.Remove(partial)
		},
	}
}

// endedOnPurpose: the JVM exited by itself (0) or after running its
// shutdown hooks on SIGTERM (143), the two ways a broker or tool of ours
// ends when nothing went wrong; the JVM writes the archive in both. A JVM
// that failed (any other status) may have loaded only the classes of its
// failure, and one killed by a signal wrote a part of the archive at most.
func endedOnPurpose(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Exited() {
		return false
	}
	return ws.ExitStatus() == 0 || ws.ExitStatus() == 128+int(syscall.SIGTERM)
}

// classArchiveKey names the archive of a JVM by everything the JVM checks
// an archive against, so that a JVM never finds one it would refuse (with
// a warning in its log) and one that would be accepted is found: the JVM
// build (its libjvm), the main class, and each jar of the classpath by
// path, size and modification time (a jar fetched again is a new
// archive). A directory on the classpath cannot be archived (the JVM
// refuses to start writing one), so it is an error.
func classArchiveKey(java, cp, main string) (string, error) {
	javaPath, err := filepath.EvalSymlinks(java)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	stamp := func(path string) error {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return errors.New(path + " is a directory: a class archive holds classes from jars only")
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", path, fi.Size(), fi.ModTime().UnixNano())
		return nil
	}
	if err := stamp(filepath.Join(filepath.Dir(filepath.Dir(javaPath)), "lib", "server", "libjvm.so")); err != nil {
		return "", err
	}
	fmt.Fprintf(h, "main\x00%s\x00", main)
	for _, jar := range filepath.SplitList(cp) {
		if err := stamp(jar); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}
