package javaruntime

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func readSample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParse reads real outputs: java17-debian.txt is this project's
// machine's `java -XshowSettings:properties -version 2>&1` (Debian 12's
// OpenJDK 17); java21-debian.txt is the same for the Debian 13 OpenJDK 21
// of the project's broker images (its values from that JDK's release
// file); the others are the -version lines alone, as a termination
// message cut to its last 4096 bytes keeps them, of the images Strimzi
// (Red Hat's OpenJDK on UBI) and Pulsar (Temurin) ship.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want v1alpha1.JavaRuntime
	}{
		{"Debian OpenJDK 17, properties", readSample(t, "java17-debian.txt"),
			v1alpha1.JavaRuntime{Version: "17.0.15+6-Debian-1deb12u1", Major: 17, Vendor: "Debian", VM: "OpenJDK 64-Bit Server VM"}},
		{"Debian OpenJDK 21, properties", readSample(t, "java21-debian.txt"),
			v1alpha1.JavaRuntime{Version: "21.0.13.1+2-1-deb13u1-Debian", Major: 21, Vendor: "Debian", VM: "OpenJDK 64-Bit Server VM"}},
		{"Red Hat OpenJDK 17, -version only", `openjdk version "17.0.13" 2024-10-15 LTS
OpenJDK Runtime Environment (Red_Hat-17.0.13.0.11-1) (build 17.0.13+11-LTS)
OpenJDK 64-Bit Server VM (Red_Hat-17.0.13.0.11-1) (build 17.0.13+11-LTS, mixed mode, sharing)
`, v1alpha1.JavaRuntime{Version: "17.0.13+11-LTS", Major: 17}},
		{"Temurin 21 behind JAVA_TOOL_OPTIONS, the properties cut off", `    java.vm.version = 21.0.5+11-LTS
    user.name = pulsar
Picked up JAVA_TOOL_OPTIONS: -XX:+UseContainerSupport -Dfoo=bar
openjdk version "21.0.5" 2024-10-15 LTS
OpenJDK Runtime Environment Temurin-21.0.5+11 (build 21.0.5+11-LTS)
OpenJDK 64-Bit Server VM Temurin-21.0.5+11 (build 21.0.5+11-LTS, mixed mode, sharing)
`, v1alpha1.JavaRuntime{Version: "21.0.5+11-LTS", Major: 21}},
		{"Oracle Java 8", `java version "1.8.0_392"
Java(TM) SE Runtime Environment (build 1.8.0_392-b08)
Java HotSpot(TM) 64-Bit Server VM (build 25.392-b08, mixed mode)
`, v1alpha1.JavaRuntime{Version: "1.8.0_392-b08", Major: 8}},
		{"OpenJ9, properties only", `Property settings:
    java.runtime.version = 17.0.12+7
    java.specification.version = 17
    java.vendor = IBM Corporation
    java.vm.name = Eclipse OpenJ9 VM
`, v1alpha1.JavaRuntime{Version: "17.0.12+7", Major: 17, Vendor: "IBM Corporation", VM: "Eclipse OpenJ9 VM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.out)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// What is not a JVM's output is an error that quotes it.
func TestParseRefuses(t *testing.T) {
	for _, out := range []string{"", "sh: 1: java: not found\n", "Error: Could not create the Java Virtual Machine.\n"} {
		_, err := Parse(out)
		if err == nil || !strings.Contains(err.Error(), "no Java version") || !strings.Contains(err.Error(), strings.TrimSpace(out)) {
			t.Errorf("Parse(%q): %v, want an error that quotes the output", out, err)
		}
	}
}

func TestMajor(t *testing.T) {
	for in, want := range map[string]int32{
		"17": 17, "17.0.15": 17, "17.0.15+6-Debian-1deb12u1": 17, "21-ea": 21, "21.0.13.1": 21,
		"1.8": 8, "1.8.0_392": 8, "1.8.0_392-b08": 8, "11.0.2": 11, "25": 25,
	} {
		if got, err := Major(in); err != nil || got != want {
			t.Errorf("Major(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-1", "+6"} {
		if _, err := Major(in); err == nil {
			t.Errorf("Major(%q): no error", in)
		}
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		rt   *v1alpha1.JavaRuntime
		want string
	}{
		{nil, "Java unknown"},
		{&v1alpha1.JavaRuntime{Version: "17.0.13+11-LTS", Major: 17}, "Java 17 (17.0.13+11-LTS)"},
		{&v1alpha1.JavaRuntime{Version: "21.0.5+11-LTS", Major: 21, Vendor: "Eclipse Adoptium", VM: "OpenJDK 64-Bit Server VM"}, "Java 21 (21.0.5+11-LTS, Eclipse Adoptium)"},
		{&v1alpha1.JavaRuntime{Version: "17.0.12+7", Major: 17, Vendor: "IBM Corporation", VM: "Eclipse OpenJ9 VM"}, "Java 17 (17.0.12+7, IBM Corporation, Eclipse OpenJ9 VM)"},
	} {
		if got := String(tt.rt); got != tt.want {
			t.Errorf("String(%+v) = %q, want %q", tt.rt, got, tt.want)
		}
	}
}

// TestProbe runs this machine's java: what local mode reads.
func TestProbe(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH")
	}
	rt, err := Probe(context.Background(), java)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Major < 8 || rt.Version == "" || rt.Vendor == "" || rt.VM == "" {
		t.Errorf("probe of %s: %+v, want a version, a major, a vendor and a VM", java, rt)
	}
	if _, err := Probe(context.Background(), "/nonexistent/java"); err == nil || !strings.Contains(err.Error(), "/nonexistent/java") {
		t.Errorf("probe of a missing java: %v, want an error naming it", err)
	}
}
