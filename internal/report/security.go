package report

import (
	"fmt"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// Client security in the report and compare: TLS and authentication change
// the numbers (encryption costs CPU on both sides of every byte, and a
// TLS record layer changes batching), so each run states the security its
// clients used, as the workers' drivers reported it.

// notRecorded is the security of results written before streambench
// recorded it: unknown, not plaintext.
const notRecorded = "not recorded"

// tlsOn: the clients encrypted their connections.
func tlsOn(s *v1alpha1.SecurityInfo) bool {
	return strings.HasSuffix(s.Protocol, "SSL") || strings.HasSuffix(s.Protocol, "+ssl") || s.TLSVersion != ""
}

// SecurityLabel is a run's client security in a few words:
// "SASL_SSL · SCRAM-SHA-512 · TLS 1.3", "plaintext, no authentication",
// or "not recorded" for results that do not say.
func SecurityLabel(s *v1alpha1.SecurityInfo) string {
	switch {
	case s == nil:
		return notRecorded
	case !tlsOn(s) && s.Mechanism == "":
		return "plaintext, no authentication"
	}
	parts := []string{s.Protocol}
	switch {
	case s.Mechanism != "" && s.Mechanism != "TLS":
		parts = append(parts, s.Mechanism)
		if s.ClientCertificate {
			parts = append(parts, "client certificate")
		}
	case s.ClientCertificate || s.Mechanism == "TLS":
		parts = append(parts, "client certificate")
	default:
		parts = append(parts, "no authentication")
	}
	if tlsOn(s) {
		parts = append(parts, nonEmpty(s.TLSVersion, "TLS version not seen"))
		switch s.Verification {
		case "no-hostname":
			parts = append(parts, "hostname not verified")
		case "none":
			parts = append(parts, "certificates not verified")
		}
	} else {
		parts = append(parts, "no TLS")
	}
	return strings.Join(parts, " · ")
}

// securityView is the report's section on the clients' security.
type securityView struct {
	Label string
	Rows  []kv
	// Recorded is false for results that do not say.
	Recorded bool
}

func securityOf(s *results.Summary) *securityView {
	sec := s.Security
	v := &securityView{Label: SecurityLabel(sec), Recorded: sec != nil}
	if sec == nil {
		return v
	}
	yes := map[bool]string{true: "yes", false: "no"}
	auth := sec.Mechanism
	switch {
	case auth == "TLS":
		auth = "client certificate (TLS)"
	case auth == "":
		auth = "none"
	}
	v.Rows = []kv{
		{Key: "protocol", Value: sec.Protocol},
		{Key: "authentication", Value: auth},
	}
	if !tlsOn(sec) {
		v.Rows = append(v.Rows, kv{Key: "TLS", Value: "none: the connections were not encrypted"})
		return v
	}
	v.Rows = append(v.Rows,
		kv{Key: "TLS version (negotiated)", Value: nonEmpty(sec.TLSVersion, "not seen")},
		kv{Key: "client certificate (mutual TLS)", Value: yes[sec.ClientCertificate]},
		kv{Key: "brokers' certificates", Value: verificationText(sec.Verification), Bad: sec.Verification == "none"},
	)
	return v
}

func verificationText(v string) string {
	switch v {
	case "full":
		return "verified: chain and hostname"
	case "no-hostname":
		return "chain verified, hostname not checked"
	case "none":
		return "NOT verified (insecureSkipVerify): encrypted, but the brokers were not authenticated; for test clusters only"
	}
	return nonEmpty(v, "not recorded")
}

// securityWarning is the report's warning for a run whose clients did not
// authenticate the brokers.
func securityWarning(s *v1alpha1.SecurityInfo) string {
	if s != nil && tlsOn(s) && s.Verification == "none" {
		return "The brokers' certificates were not verified (insecureSkipVerify): the connections were encrypted, but the brokers were not authenticated; for test clusters only."
	}
	return ""
}

// securityDiff says how two runs' client security differs in what changes
// the numbers ("SASL_SSL · SCRAM-SHA-512 · TLS 1.3 vs plaintext, no
// authentication"), or "" when it does not. How the brokers' certificates
// were checked is left out: a hostname check is once per connection, not
// per message. Across systems the mechanisms have different names by
// nature (SCRAM against a token), so only TLS, its version, whether the
// clients authenticated and a client certificate are compared.
func securityDiff(a, b *v1alpha1.SecurityInfo, sameSystem bool) string {
	if a == nil || b == nil {
		return ""
	}
	type shape struct {
		tls           bool
		version, mech string
		authenticated bool
		clientCert    bool
	}
	of := func(s *v1alpha1.SecurityInfo) shape {
		sh := shape{tls: tlsOn(s), version: s.TLSVersion, authenticated: s.Mechanism != "" && s.Mechanism != "TLS",
			clientCert: s.ClientCertificate || s.Mechanism == "TLS"}
		if sameSystem {
			sh.mech = s.Mechanism
		}
		return sh
	}
	if of(a) == of(b) {
		return ""
	}
	return fmt.Sprintf("%s vs %s", SecurityLabel(a), SecurityLabel(b))
}
