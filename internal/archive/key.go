package archive

import (
	"fmt"
	"strings"
)

// tempMark starts the name of a directory store's file while it is being
// written (dirStore.Put), which List never shows. No key's segment may
// start with it, in either kind of store, so that a key valid in one is
// valid in the other.
const tempMark = ".archive-tmp-"

// ValidateKey says why key cannot name a file in an archive, or nil. A key
// is '/'-separated segments, none of them empty, "." or ".." and none
// starting with ".archive-tmp-" (a directory store's file being written),
// with no leading '/' and no NUL byte: so that every key is one file under
// a directory store's directory and the same key in S3, and a key read
// from a bucket someone else can write cannot name a path outside the
// directory it is fetched into.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("key is empty")
	case strings.HasPrefix(key, "/"):
		return fmt.Errorf("key %q starts with '/': keys are relative to the archive's location", key)
	case strings.ContainsRune(key, 0):
		return fmt.Errorf("key %q contains a NUL byte", key)
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("key %q has an empty segment (a doubled or trailing '/')", key)
		case seg == "." || seg == "..":
			return fmt.Errorf("key %q has a %q segment: keys name files under the archive's location, never above or beside it", key, seg)
		case strings.HasPrefix(seg, tempMark):
			return fmt.Errorf("key %q has a segment starting with %q, which names a directory store's file while it is written", key, tempMark)
		}
	}
	return nil
}

// join is path/name as a key, or name alone when path is empty.
func join(path, name string) string {
	path = strings.Trim(path, "/")
	if path == "" {
		return name
	}
	return path + "/" + name
}
