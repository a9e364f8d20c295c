// Package provision holds what the builders of the system-specific
// provisioners (strimzi, pulsar, workers) share.
package provision

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// DNSLabel derives a DNS-1035 label of at most max characters from a run's
// name. A name that already is such a label and fits is used as it is; any
// other is lower-cased, stripped of other characters, given a leading letter
// ("sb-") where needed, cut, and suffixed with hashDigits hex digits of its
// SHA-256, so two runs never share a name and the same run always gets the
// same one.
func DNSLabel(name string, max, hashDigits int) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	clean := strings.Trim(b.String(), "-")
	if clean == "" || clean[0] < 'a' || clean[0] > 'z' {
		clean = strings.TrimRight("sb-"+clean, "-")
	}
	if clean == name && len(clean) <= max {
		return clean
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashDigits]
	if len(clean) > max-len(suffix) {
		clean = clean[:max-len(suffix)]
	}
	return strings.TrimRight(clean, "-") + suffix
}
