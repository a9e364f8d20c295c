// Package version says which streambench a binary is: the release version
// and the commit it was built from.
//
// The Makefile and ko (.ko.yaml) set both with
//
//	-ldflags "-X github.com/streambench/streambench-operator/internal/version.version=v0.1.0
//	          -X github.com/streambench/streambench-operator/internal/version.commit=<sha>"
//
// A binary built without them (go build, go install) falls back to what the
// Go toolchain embedded (go version -m): the module version of a go install
// and the VCS revision of a build in a git checkout.
package version

import (
	"fmt"
	"regexp"
	"runtime/debug"
)

// Package is the import path the -X flags name.
const Package = "github.com/streambench/streambench-operator/internal/version"

// Set by -ldflags -X; empty when the build did not set them.
var (
	version string
	commit  string
)

// Info is the version and commit of this binary.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Modified is true when the VCS tree had uncommitted changes (only
	// known from the toolchain's build info).
	Modified bool `json:"modified,omitempty"`
}

// Get returns the version and commit of this binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, bi)
}

// Version is the version alone, e.g. for the default worker image tag.
func Version() string { return Get().Version }

// String is the one line `streambench version` prints.
func (i Info) String() string {
	s := fmt.Sprintf("streambench %s (commit %s)", i.Version, i.Commit)
	if i.Modified {
		s += " with uncommitted changes"
	}
	return s
}

// resolve prefers the linker's values; each one missing is taken from the
// build info; "unknown" rather than an empty string says plainly that the
// build recorded nothing.
func resolve(ldVersion, ldCommit string, bi *debug.BuildInfo) Info {
	info := Info{Version: ldVersion, Commit: ldCommit}
	if bi != nil {
		// "(devel)" is what a build in a checkout records: no version.
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.modified":
				info.Modified = ldCommit == "" && s.Value == "true"
			}
		}
	}
	if info.Version == "" {
		info.Version = "unknown"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// Repository is where releases push the streambench image.
const Repository = "ghcr.io/streambench/streambench"

var release = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)(-dev)?$`)

// Image is the released image of this build: the tag of a release build
// (v0.1.0 -> :0.1.0), or the release a -dev build leads to, so a manager
// started without --worker-image runs workers of its own version. A build
// that recorded no release version has no such image: ok is false.
func (i Info) Image() (image string, ok bool) {
	m := release.FindStringSubmatch(i.Version)
	if m == nil {
		return "", false
	}
	return Repository + ":" + m[1], true
}
