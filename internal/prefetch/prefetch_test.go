package prefetch

import (
	"testing"
	"unsafe"
)

// TestForWriteChangesNothing: a hint on a buffer's lines, at their starts
// and in between, leaves every byte as it was (the effect it exists for is
// speed, which hack/bench-omb measures, not a test).
func TestForWriteChangesNothing(t *testing.T) {
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for i := 0; i < len(buf); i += 37 {
		ForWrite(unsafe.Pointer(&buf[i]))
	}
	for i := range buf {
		if buf[i] != byte(i*7) {
			t.Fatalf("byte %d is %d after the hint, want %d", i, buf[i], byte(i*7))
		}
	}
}
