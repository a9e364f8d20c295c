package archive

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Kind is what kind of store a Location names.
type Kind string

const (
	// KindS3 is a bucket of an S3-compatible object store, with an
	// optional prefix inside it.
	KindS3 Kind = "s3"
	// KindDir is a directory of the local file system.
	KindDir Kind = "file"
)

// Location is where an archive is: a bucket and a prefix, or a directory.
type Location struct {
	Kind Kind
	// Bucket and Prefix, for KindS3. Prefix has no leading or trailing
	// '/' and may be empty (the whole bucket).
	Bucket, Prefix string
	// Dir, for KindDir: the directory as given (relative to the current
	// directory if it was given relative), cleaned.
	Dir string
}

// accepted is what ParseLocation's errors say it accepts.
const accepted = "s3://BUCKET[/PREFIX], file:///ABSOLUTE/PATH or a directory's path"

// bucketName is S3's rule for a bucket's name (the one that also works in
// a host name, for virtual-hosted-style requests), and the one
// spec.results.archive.url's pattern checks.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// scheme is a URL's scheme (RFC 3986) before "://"; anything else before
// "://" makes the string a path.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// ParseLocation reads a location: s3://BUCKET[/PREFIX], file:///PATH, or
// a plain path of a directory. The text after the scheme is taken as it
// is, with no percent-decoding: S3 keys and file names are literal, and an
// s3:// URL here is what `aws s3` accepts.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, fmt.Errorf("archive location is empty: give %s", accepted)
	}
	sch, rest, isURL := strings.Cut(s, "://")
	if !isURL || !scheme.MatchString(sch) {
		return Location{Kind: KindDir, Dir: filepath.Clean(s)}, nil
	}
	switch strings.ToLower(sch) {
	case "s3":
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("archive location %q names no bucket: write s3://BUCKET[/PREFIX]", s)
		}
		if !bucketName.MatchString(bucket) {
			return Location{}, fmt.Errorf("archive location %q: bucket %q is not a valid bucket name (3-63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit)", s, bucket)
		}
		prefix = strings.TrimSuffix(prefix, "/")
		if prefix != "" {
			if err := ValidateKey(prefix); err != nil {
				return Location{}, fmt.Errorf("archive location %q: prefix %w", s, err)
			}
		}
		return Location{Kind: KindS3, Bucket: bucket, Prefix: prefix}, nil
	case "file":
		// file://host/path names a path on another host; only the local
		// one (an empty host) can be opened.
		if !strings.HasPrefix(rest, "/") {
			return Location{}, fmt.Errorf("archive location %q: a file URL needs an absolute path and no host: write file:///PATH (three slashes) or the plain path", s)
		}
		return Location{Kind: KindDir, Dir: filepath.Clean(rest)}, nil
	default:
		return Location{}, fmt.Errorf("archive location %q: scheme %q is not supported: give %s", s, sch, accepted)
	}
}

// String is the location as ParseLocation reads it back: s3://bucket/prefix,
// file:///absolute/path, or a relative path as it was given.
func (l Location) String() string {
	switch l.Kind {
	case KindS3:
		if l.Prefix == "" {
			return "s3://" + l.Bucket
		}
		return "s3://" + l.Bucket + "/" + l.Prefix
	case KindDir:
		if filepath.IsAbs(l.Dir) {
			return "file://" + filepath.ToSlash(l.Dir)
		}
		return l.Dir
	}
	return fmt.Sprintf("archive.Location{Kind: %q}", string(l.Kind))
}

// Join is the location of a path under l (a run's place, RunPath), as a
// status or a log names it.
func (l Location) Join(path string) Location {
	path = strings.Trim(path, "/")
	if path == "" {
		return l
	}
	switch l.Kind {
	case KindS3:
		if l.Prefix == "" {
			l.Prefix = path
		} else {
			l.Prefix += "/" + path
		}
	case KindDir:
		l.Dir = filepath.Join(l.Dir, filepath.FromSlash(path))
	}
	return l
}

// ObjectURL is the HTTP(S) address of the object key (relative to the
// location's prefix) of an S3 location, as o reaches the bucket: in the
// path for path-style servers, in the host name otherwise, on AWS's
// regional endpoint when o names none. It is what a page over an S3
// archive links a run's report with: a browser opens it where the bucket
// is readable to it (a public or website bucket, or behind the team's
// proxy); --link-base names another address.
func ObjectURL(loc Location, o S3Options, key string) (string, error) {
	if loc.Kind != KindS3 {
		return "", fmt.Errorf("%s is not an S3 location", loc)
	}
	region := o.Region
	if region == "" {
		region = DefaultRegion
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the S3 endpoint %q is not a URL (as http://host:port)", endpoint)
	}
	full := path.Join(loc.Prefix, key)
	if o.PathStyle {
		u.Path = path.Join("/", u.Path, loc.Bucket, full)
	} else {
		u.Host = loc.Bucket + "." + u.Host
		u.Path = path.Join("/", u.Path, full)
	}
	return u.String(), nil
}
