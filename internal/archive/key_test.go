package archive

import (
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	for _, tt := range []struct {
		key     string
		wantErr string // "" for a valid key
	}{
		{"summary.json", ""},
		{"runs/local/r1/20261201T020000Z/summary.json", ""},
		{"repeat-1/omb-result.json", ""},
		{"a b/c%2F..d", ""}, // spaces, '%' and dots inside a name are fine
		{".hidden", ""},
		{"...", ""},

		{"", "key is empty"},
		{"/etc/passwd", `key "/etc/passwd" starts with '/': keys are relative to the archive's location`},
		{"a//b", `key "a//b" has an empty segment (a doubled or trailing '/')`},
		{"a/", "has an empty segment"},
		{"..", `key ".." has a ".." segment: keys name files under the archive's location, never above or beside it`},
		{"../x", `has a ".." segment`},
		{"a/../../x", `has a ".." segment`},
		{"a/./b", `has a "." segment`},
		{"a\x00b", "contains a NUL byte"},
		{"a/.archive-tmp-123", `has a segment starting with ".archive-tmp-"`},
	} {
		err := ValidateKey(tt.key)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateKey(%q) = %v, want nil", tt.key, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateKey(%q) = %v, want an error containing %q", tt.key, err, tt.wantErr)
		}
	}
}
