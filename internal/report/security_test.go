package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

var (
	secPlainKafka  = &v1alpha1.SecurityInfo{Protocol: "PLAINTEXT"}
	secPlainPulsar = &v1alpha1.SecurityInfo{Protocol: "pulsar"}
	secSCRAM       = &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "full"}
	secMTLS        = &v1alpha1.SecurityInfo{Protocol: "SSL", Mechanism: "TLS", TLSVersion: "TLS 1.3", ClientCertificate: true, Verification: "full"}
	secToken       = &v1alpha1.SecurityInfo{Protocol: "pulsar+ssl", Mechanism: "Token", TLSVersion: "TLS 1.3", Verification: "no-hostname"}
)

func TestSecurityLabel(t *testing.T) {
	tests := []struct {
		in   *v1alpha1.SecurityInfo
		want string
	}{
		{nil, "not recorded"},
		{secPlainKafka, "plaintext, no authentication"},
		{secPlainPulsar, "plaintext, no authentication"},
		{secSCRAM, "SASL_SSL · SCRAM-SHA-512 · TLS 1.3"},
		{secMTLS, "SSL · client certificate · TLS 1.3"},
		{secToken, "pulsar+ssl · Token · TLS 1.3 · hostname not verified"},
		{&v1alpha1.SecurityInfo{Protocol: "SSL", TLSVersion: "TLS 1.2", Verification: "none"}, "SSL · no authentication · TLS 1.2 · certificates not verified"},
		{&v1alpha1.SecurityInfo{Protocol: "SASL_PLAINTEXT", Mechanism: "PLAIN"}, "SASL_PLAINTEXT · PLAIN · no TLS"},
		{&v1alpha1.SecurityInfo{Protocol: "pulsar", Mechanism: "Token"}, "pulsar · Token · no TLS"},
		{&v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "OAUTHBEARER", ClientCertificate: true, Verification: "full"}, "SASL_SSL · OAUTHBEARER · client certificate · TLS version not seen"},
	}
	for _, tt := range tests {
		if got := SecurityLabel(tt.in); got != tt.want {
			t.Errorf("SecurityLabel(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReportStatesSecurity: the report's header and its Client security
// section state the protocol, mechanism, TLS version, client certificate
// and verification; a plaintext run says so, an old run says not
// recorded, and a run that did not verify the brokers is warned about.
func TestReportStatesSecurity(t *testing.T) {
	render := func(sec *v1alpha1.SecurityInfo) page {
		t.Helper()
		s := summary("run", v1alpha1.SystemKafka, 2, v1alpha1.LatencySummary{Avg: 3, P50: 3, P99: 5}, 4)
		s.Security = sec
		var buf bytes.Buffer
		if err := Render(&buf, s, nil); err != nil {
			t.Fatal(err)
		}
		return parsePage(t, buf.Bytes())
	}
	const section = "Client security"
	p := render(secSCRAM)
	for _, r := range [][]string{
		{"protocol", "SASL_SSL"}, {"authentication", "SCRAM-SHA-512"}, {"TLS version (negotiated)", "TLS 1.3"},
		{"client certificate (mutual TLS)", "no"}, {"brokers' certificates", "verified: chain and hostname"},
	} {
		if got := p.row(t, section, r[0]); got[1] != r[1] {
			t.Errorf("%s: %q, want %q", r[0], got[1], r[1])
		}
	}
	if !strings.Contains(p.text, "SASL_SSL · SCRAM-SHA-512 · TLS 1.3") {
		t.Error("the header does not state the security")
	}

	p = render(secMTLS)
	if got := p.row(t, section, "client certificate (mutual TLS)"); got[1] != "yes" {
		t.Errorf("mutual TLS: client certificate %q", got[1])
	}
	if got := p.row(t, section, "authentication"); got[1] != "client certificate (TLS)" {
		t.Errorf("mutual TLS: authentication %q", got[1])
	}

	p = render(secPlainKafka)
	if !strings.Contains(p.text, "plaintext, no authentication") {
		t.Error("a plaintext run does not say so")
	}
	if got := p.row(t, section, "TLS"); got[1] != "none: the connections were not encrypted" {
		t.Errorf("plaintext: TLS %q", got[1])
	}

	p = render(nil)
	if !strings.Contains(p.text, "Not recorded: these results were written before streambench recorded the clients' security") {
		t.Error("an old run's report does not say its security is not recorded")
	}
	if strings.Contains(p.text, "plaintext, no authentication") {
		t.Error("an old run's report claims plaintext")
	}

	p = render(&v1alpha1.SecurityInfo{Protocol: "SSL", TLSVersion: "TLS 1.3", Verification: "none"})
	if !strings.Contains(p.text, "The brokers' certificates were not verified (insecureSkipVerify)") {
		t.Error("no warning for a run that did not verify the brokers")
	}
	if got := p.row(t, section, "brokers' certificates"); !strings.HasPrefix(got[1], "NOT verified") {
		t.Errorf("insecure: %q", got[1])
	}
}

// TestCompareSecurity: compare lists each run's security and flags pairs
// whose TLS or authentication differ; how the brokers' certificates were
// checked is not a difference in the numbers, and across systems the
// mechanisms' names are not compared.
func TestCompareSecurity(t *testing.T) {
	tests := []struct {
		name string
		a, b *v1alpha1.SecurityInfo
		// pulsarB makes the second run Pulsar's (fairTwins' twin).
		pulsarB bool
		flag    string // "" for no security flag
	}{
		{name: "the same", a: secSCRAM, b: secSCRAM},
		{name: "plaintext vs SASL_SSL", a: secPlainKafka, b: secSCRAM,
			flag: "kafka vs kafka-b: the clients' security differs (plaintext, no authentication vs SASL_SSL · SCRAM-SHA-512 · TLS 1.3): TLS costs CPU"},
		{name: "another mechanism", a: secSCRAM, b: &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "PLAIN", TLSVersion: "TLS 1.3", Verification: "full"},
			flag: "(SASL_SSL · SCRAM-SHA-512 · TLS 1.3 vs SASL_SSL · PLAIN · TLS 1.3)"},
		{name: "another TLS version", a: secSCRAM, b: &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.2", Verification: "full"},
			flag: "TLS 1.3 vs SASL_SSL · SCRAM-SHA-512 · TLS 1.2"},
		{name: "only the verification differs", a: secSCRAM, b: &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "no-hostname"}},
		{name: "Kafka and Pulsar both plaintext", a: secPlainKafka, b: secPlainPulsar, pulsarB: true},
		{name: "Kafka SCRAM and Pulsar token, both over TLS 1.3", a: secSCRAM, b: secToken, pulsarB: true},
		{name: "Kafka over TLS, Pulsar plaintext", a: secSCRAM, b: secPlainPulsar, pulsarB: true,
			flag: "(SASL_SSL · SCRAM-SHA-512 · TLS 1.3 vs plaintext, no authentication)"},
		{name: "one not recorded", a: nil, b: secPlainKafka,
			flag: "kafka vs kafka-b: the clients' security of kafka is not recorded"},
		{name: "neither recorded", a: nil, b: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := fairTwins()
			runs[0].Summary.Security = tt.a
			if !tt.pulsarB {
				s := *runs[0].Summary
				runs[1] = Named{Name: "kafka-b", Summary: &s}
			}
			runs[1].Summary.Security = tt.b
			var got []Flag
			for _, f := range Flags(runs, DefaultFairness) {
				if f.Kind == FlagSecurity {
					got = append(got, f)
				}
			}
			switch {
			case tt.flag == "" && len(got) > 0:
				t.Errorf("flagged: %v", got)
			case tt.flag != "" && (len(got) != 1 || !strings.Contains(got[0].Message, tt.flag)):
				t.Errorf("flags %v, want one with %q", got, tt.flag)
			}

			table, err := Compare(runs)
			if err != nil {
				t.Fatal(err)
			}
			if tt.a == nil && tt.b == nil {
				if len(table.Security) != 0 {
					t.Errorf("a Client security table for runs that recorded none: %q", table.Security)
				}
				return
			}
			if len(table.Security) != 2 || table.Security[0][1] != SecurityLabel(tt.a) || table.Security[1][1] != SecurityLabel(tt.b) {
				t.Errorf("the Client security table %q", table.Security)
			}
			var text bytes.Buffer
			if err := table.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "Client security") || !strings.Contains(text.String(), SecurityLabel(tt.b)) {
				t.Errorf("compare's text does not list the security:\n%s", text.String())
			}
			var page bytes.Buffer
			if err := RenderCompare(&page, runs); err != nil {
				t.Fatal(err)
			}
			p := parsePage(t, page.Bytes())
			if got := p.row(t, "Client security", runs[1].Name); got[1] != SecurityLabel(tt.b) {
				t.Errorf("the compare page's Client security row %q", got)
			}
		})
	}
}

// A summary.json written before the field existed reads as not recorded.
func TestOldSummaryHasNoSecurity(t *testing.T) {
	s := &results.Summary{}
	if securityOf(s).Recorded || SecurityLabel(s.Security) != "not recorded" {
		t.Error("an old summary's security is not 'not recorded'")
	}
}
