package v1alpha1

import "testing"

func TestManagedSecurityLabel(t *testing.T) {
	tests := []struct {
		sec     *ManagedSecurity
		label   string
		secured bool
	}{
		{nil, "plain", false},
		{&ManagedSecurity{}, "plain", false},
		{&ManagedSecurity{TLS: true}, "tls", true},
		{&ManagedSecurity{Authentication: ManagedAuthScramSHA512}, "scram", true},
		{&ManagedSecurity{TLS: true, Authentication: ManagedAuthScramSHA512}, "tls-scram", true},
		{&ManagedSecurity{TLS: true, Authentication: ManagedAuthTLS}, "mtls", true},
		{&ManagedSecurity{Authentication: ManagedAuthToken}, "token", true},
		{&ManagedSecurity{TLS: true, Authentication: ManagedAuthToken}, "tls-token", true},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if got := tt.sec.Label(); got != tt.label {
			t.Errorf("%+v.Label() = %s, want %s", tt.sec, got, tt.label)
		}
		if got := tt.sec.Secured(); got != tt.secured {
			t.Errorf("%+v.Secured() = %v, want %v", tt.sec, got, tt.secured)
		}
		seen[tt.label] = true
	}
	// Two settings must never share a label: it tells their cells apart.
	if len(seen) != 7 {
		t.Errorf("%d distinct labels, want 7", len(seen))
	}
}
