package v1alpha1

// Label names a managed security setting in the names of a suite's
// clusters and cells and in its tables: plain, tls, scram, tls-scram,
// mtls, token or tls-token. Short, since a cell's name is at most 40
// characters; nil is plain.
func (s *ManagedSecurity) Label() string {
	if s == nil {
		return "plain"
	}
	switch s.Authentication {
	case ManagedAuthTLS:
		// The schema refuses authentication tls without tls: true.
		return "mtls"
	case ManagedAuthScramSHA512:
		if s.TLS {
			return "tls-scram"
		}
		return "scram"
	case ManagedAuthToken:
		if s.TLS {
			return "tls-token"
		}
		return "token"
	}
	if s.TLS {
		return "tls"
	}
	return "plain"
}

// Secured reports whether the clients need TLS or credentials.
func (s *ManagedSecurity) Secured() bool {
	return s != nil && (s.TLS || s.Authentication != "")
}
