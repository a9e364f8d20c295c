package testbed

import (
	"fmt"
	"os"
)

// DropPageCache writes back dirty pages and drops the clean ones (page
// cache, dentries and inodes), so the next read of a backlog comes from the
// disk, as the durability study arranged before every catch-up test. It
// needs a privileged container: /proc/sys is read-only otherwise.
func DropPageCache() error {
	sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
		return fmt.Errorf("drop the page cache: %w (it needs a privileged container: spec.testbed.dropPageCache runs one)", err)
	}
	return nil
}
