// Package javaruntime reads which Java runtime a broker runs on from what
// `java -XshowSettings:properties -version` prints: local mode runs it on
// the java its broker JVMs start (internal/localbrokers), a managed run's
// probe Job on the broker image (internal/provision/probe). Compare flags
// runs whose brokers ran on different major versions: the default
// collector, its ergonomics and the JIT change between majors.
package javaruntime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Args make java print its system properties and version (both to stderr)
// and exit without running anything.
var Args = []string{"-XshowSettings:properties", "-version"}

// ProbeTimeout bounds one probe: a JVM start, about 0.3 s on an idle
// machine, seconds on a busy one.
const ProbeTimeout = 30 * time.Second

// Probe runs java (a path, or a name on PATH) with Args and parses what
// it printed.
func Probe(ctx context.Context, java string) (v1alpha1.JavaRuntime, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, Args...).CombinedOutput()
	if err != nil {
		return v1alpha1.JavaRuntime{}, fmt.Errorf("%s %s: %w\n%s", java, strings.Join(Args, " "), err, tail(string(out), 500))
	}
	return Parse(string(out))
}

// versionLine is -version's first line: `openjdk version "17.0.15"
// 2025-04-15` (`java version "1.8.0_392"` for Oracle's).
var versionLine = regexp.MustCompile(`^\S+ version "([^"]+)"`)

// buildLine is -version's second line: `OpenJDK Runtime Environment
// (build 17.0.15+6-Debian-1deb12u1)`; vendors put their name between
// (Temurin-21.0.5+11, (Red_Hat-17.0.13.0.11-1)), hence the last "(build".
var buildLine = regexp.MustCompile(`Runtime Environment.*\(build ([^)\s,]+)\)\s*$`)

// Parse reads the output of `java -XshowSettings:properties -version`:
// the properties first (java.runtime.version, java.specification.version,
// java.vendor, java.vm.name), the -version lines when the properties are
// missing (a Kubernetes termination message keeps only the last 4096
// bytes, and -version prints last). Other lines (a "Picked up
// JAVA_TOOL_OPTIONS" notice, a property's continuation lines) are
// skipped.
func Parse(out string) (v1alpha1.JavaRuntime, error) {
	props := map[string]string{}
	var shortVersion, build string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := versionLine.FindStringSubmatch(line); m != nil {
			shortVersion = m[1]
			continue
		}
		if m := buildLine.FindStringSubmatch(line); m != nil {
			build = m[1]
			continue
		}
		if k, v, ok := strings.Cut(line, " = "); ok && !strings.ContainsAny(k, " \t") {
			props[k] = strings.TrimSpace(v)
		}
	}
	rt := v1alpha1.JavaRuntime{
		Version: first(props["java.runtime.version"], build, props["java.version"], shortVersion),
		Vendor:  props["java.vendor"],
		VM:      props["java.vm.name"],
	}
	if rt.Version == "" {
		return rt, fmt.Errorf("no Java version in the output of java %s (neither java.runtime.version nor a `version \"...\"` line): %q",
			strings.Join(Args, " "), tail(out, 300))
	}
	for _, v := range []string{props["java.specification.version"], props["java.version"], shortVersion, rt.Version} {
		if m, err := Major(v); err == nil {
			rt.Major = m
			break
		}
	}
	if rt.Major == 0 {
		return rt, fmt.Errorf("Java version %q: no major version in it", rt.Version)
	}
	return rt, nil
}

// Major is the feature release of a Java version string: 17 of "17",
// "17.0.15" or "17.0.15+6-Debian", 21 of "21-ea", 8 of "1.8.0_392" (before
// Java 9 the feature release was the second number).
func Major(version string) (int32, error) {
	s := version
	if i := strings.IndexAny(s, "+-_"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if parts[0] == "1" && len(parts) > 1 {
		parts = parts[1:]
	}
	n, err := strconv.ParseInt(parts[0], 10, 32)
	if err != nil || n <= 0 {
		return 0, errors.New("javaruntime: no major version in " + strconv.Quote(version))
	}
	return int32(n), nil
}

// String is how the results and compare name a runtime: "Java 17
// (17.0.15+6-Debian-1deb12u1, Debian)".
func String(rt *v1alpha1.JavaRuntime) string {
	if rt == nil {
		return "Java unknown"
	}
	detail := rt.Version
	if rt.Vendor != "" {
		detail += ", " + rt.Vendor
	}
	if rt.VM != "" && !strings.HasPrefix(rt.VM, "OpenJDK ") && !strings.HasPrefix(rt.VM, "Java HotSpot") {
		// HotSpot is the usual VM; another (OpenJ9) is worth saying.
		detail += ", " + rt.VM
	}
	return fmt.Sprintf("Java %d (%s)", rt.Major, detail)
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
