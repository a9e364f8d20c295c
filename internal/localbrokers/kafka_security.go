package localbrokers

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A local Kafka's secured client listeners. Each KafkaListener is one more
// listener on every broker, beside the plaintext one that also carries
// inter-broker traffic (and the controller's own): securing a listener
// changes only what its clients see, never how the cluster forms, so a
// broken certificate or JAAS line fails the clients of that listener, not
// the start.

// Listener protocols, as Kafka's listener.security.protocol.map names them.
const (
	ListenerSSL           = "SSL"
	ListenerSASLSSL       = "SASL_SSL"
	ListenerSASLPlaintext = "SASL_PLAINTEXT"
)

// SASL mechanisms a listener can enable.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// KafkaListener is a secured client listener.
type KafkaListener struct {
	// Name of the listener: upper-case letters, digits and '_', not
	// PLAINTEXT or CONTROLLER (e.g. SASL, MTLS).
	Name string
	// Protocol is SSL, SASL_SSL or SASL_PLAINTEXT.
	Protocol string
	// CertFile and KeyFile are the brokers' PEM certificate (chain) and
	// its unencrypted PKCS#8 PEM key, for SSL and SASL_SSL. Every broker
	// presents the same one, so it must name the host (127.0.0.1).
	CertFile, KeyFile string
	// ClientCAFile is a PEM bundle of the CAs whose client certificates
	// the listener accepts.
	ClientCAFile string
	// RequireClientCert sets ssl.client.auth=required (mutual TLS); it
	// needs ClientCAFile.
	RequireClientCert bool
	// TLSProtocols, when set, are the only TLS versions the listener
	// accepts (ssl.enabled.protocols, e.g. TLSv1.2); by default Java's
	// TLSv1.2 and TLSv1.3.
	TLSProtocols []string
	// Mechanisms are the SASL mechanisms enabled (SASL_* only).
	Mechanisms []string
	// Users are the PLAIN users (in the listener's JAAS configuration)
	// and, for each SCRAM mechanism enabled, the SCRAM users (written into
	// the cluster metadata when the storage is formatted). Test
	// credentials: they appear in the node's server.properties and on the
	// storage tool's command line.
	Users []KafkaUser
	// OAuth validates OAUTHBEARER tokens; required with OAUTHBEARER.
	OAuth *KafkaOAuth
}

// KafkaUser is a user name and its password.
type KafkaUser struct {
	Name, Password string
}

// KafkaOAuth is how a listener validates OAUTHBEARER tokens: RS256 JWTs
// checked against the issuer's JWKS (Kafka's
// OAuthBearerValidatorCallbackHandler).
type KafkaOAuth struct {
	// JWKSURL serves the issuer's signing keys.
	JWKSURL string
	// Issuer and Audience, when set, must match the tokens' iss and aud.
	Issuer, Audience string
}

var listenerName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// credentialChars are what the JAAS line and the storage tool's
// --add-scram argument carry unquoted: no quote, backslash, comma,
// bracket, equals sign or white space.
var credentialChars = regexp.MustCompile(`^[^"\\,\[\]=\s;]+$`)

// checkListeners refuses listeners StartKafka could not open, naming the
// field and the fix.
func checkListeners(ls []KafkaListener) error {
	seen := map[string]bool{}
	scram := map[string]string{} // mechanism/user -> password
	var oauth *KafkaOAuth
	for i, l := range ls {
		f := fmt.Sprintf("KafkaOptions.Listeners[%d]", i)
		switch {
		case !listenerName.MatchString(l.Name):
			return fmt.Errorf("localbrokers: %s.Name %q must be upper-case letters, digits and '_' (e.g. SASL)", f, l.Name)
		case l.Name == "PLAINTEXT" || l.Name == "CONTROLLER":
			return fmt.Errorf("localbrokers: %s.Name %s is StartKafka's own listener; name it otherwise", f, l.Name)
		case seen[l.Name]:
			return fmt.Errorf("localbrokers: %s.Name %s is given twice", f, l.Name)
		}
		seen[l.Name] = true
		tls := l.Protocol == ListenerSSL || l.Protocol == ListenerSASLSSL
		sasl := l.Protocol == ListenerSASLSSL || l.Protocol == ListenerSASLPlaintext
		if !tls && !sasl {
			return fmt.Errorf("localbrokers: %s.Protocol %q: want SSL, SASL_SSL or SASL_PLAINTEXT", f, l.Protocol)
		}
		if tls && (l.CertFile == "" || l.KeyFile == "") {
			return fmt.Errorf("localbrokers: %s (%s) needs CertFile and KeyFile, the brokers' PEM certificate and key", f, l.Protocol)
		}
		if !tls && (l.CertFile != "" || l.ClientCAFile != "" || l.RequireClientCert || len(l.TLSProtocols) > 0) {
			return fmt.Errorf("localbrokers: %s is %s: certificates need SSL or SASL_SSL", f, l.Protocol)
		}
		if l.RequireClientCert && l.ClientCAFile == "" {
			return fmt.Errorf("localbrokers: %s.RequireClientCert needs ClientCAFile, the CA of the client certificates", f)
		}
		if sasl != (len(l.Mechanisms) > 0) {
			if sasl {
				return fmt.Errorf("localbrokers: %s is %s: set Mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", f, l.Protocol)
			}
			return fmt.Errorf("localbrokers: %s is %s: Mechanisms need SASL_SSL or SASL_PLAINTEXT", f, l.Protocol)
		}
		for _, m := range l.Mechanisms {
			switch m {
			case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
			case MechanismOAuthBearer:
				if l.OAuth == nil || l.OAuth.JWKSURL == "" {
					return fmt.Errorf("localbrokers: %s enables OAUTHBEARER: set OAuth.JWKSURL", f)
				}
				// The validator's settings are read per listener, but the
				// allowed-URLs system property is per JVM: one issuer.
				if oauth != nil && *oauth != *l.OAuth {
					return fmt.Errorf("localbrokers: %s.OAuth differs from another listener's; one issuer per cluster", f)
				}
				oauth = l.OAuth
			default:
				return fmt.Errorf("localbrokers: %s.Mechanisms: %q is not PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", f, m)
			}
		}
		for j, u := range l.Users {
			if !credentialChars.MatchString(u.Name) || !credentialChars.MatchString(u.Password) {
				return fmt.Errorf("localbrokers: %s.Users[%d]: name and password must be non-empty, without quotes, backslashes, commas, brackets, '=', ';' or spaces", f, j)
			}
			for _, m := range l.Mechanisms {
				if !isSCRAM(m) {
					continue
				}
				k := m + "/" + u.Name
				if p, ok := scram[k]; ok && p != u.Password {
					return fmt.Errorf("localbrokers: %s.Users[%d]: %s user %s has another password on another listener; SCRAM users are the cluster's", f, j, m, u.Name)
				}
				scram[k] = u.Password
			}
		}
	}
	return nil
}

func isSCRAM(m string) bool { return m == MechanismSCRAMSHA256 || m == MechanismSCRAMSHA512 }

// keystoreFile is where StartKafka writes listener l's PEM keystore (the
// key, then the certificate chain, as ssl.keystore.type=PEM reads a file).
func keystoreFile(dir string, l KafkaListener) string {
	return filepath.Join(dir, strings.ToLower(l.Name)+"-keystore.pem")
}

// writeKeystores writes every TLS listener's PEM keystore into dir.
func writeKeystores(dir string, ls []KafkaListener) error {
	for _, l := range ls {
		if l.CertFile == "" {
			continue
		}
		key, err := os.ReadFile(l.KeyFile)
		if err != nil {
			return fmt.Errorf("localbrokers: listener %s key: %w", l.Name, err)
		}
		cert, err := os.ReadFile(l.CertFile)
		if err != nil {
			return fmt.Errorf("localbrokers: listener %s certificate: %w", l.Name, err)
		}
		if err := os.WriteFile(keystoreFile(dir, l), append(append(key, '\n'), cert...), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// addListeners adds the secured listeners to a node's settings p (as
// kafkaNodeSettings made them): each on host at ports[name], advertised
// there, with its protocol, keystore (in dir), truststore and SASL
// configuration. Pure, for the table test.
func addListeners(p map[string]string, ls []KafkaListener, ports map[string]int, host, dir string) {
	if len(ls) == 0 {
		return
	}
	var listeners, protos []string
	for _, l := range ls {
		listeners = append(listeners, fmt.Sprintf("%s://%s:%d", l.Name, host, ports[l.Name]))
		protos = append(protos, l.Name+":"+l.Protocol)
		pre := "listener.name." + strings.ToLower(l.Name) + "."
		if l.CertFile != "" {
			p[pre+"ssl.keystore.type"] = "PEM"
			p[pre+"ssl.keystore.location"] = keystoreFile(dir, l)
			p[pre+"ssl.client.auth"] = "none"
			if l.ClientCAFile != "" {
				p[pre+"ssl.truststore.type"] = "PEM"
				p[pre+"ssl.truststore.location"] = l.ClientCAFile
				p[pre+"ssl.client.auth"] = "requested"
			}
			if l.RequireClientCert {
				p[pre+"ssl.client.auth"] = "required"
			}
			if len(l.TLSProtocols) > 0 {
				p[pre+"ssl.enabled.protocols"] = strings.Join(l.TLSProtocols, ",")
			}
		}
		if len(l.Mechanisms) == 0 {
			continue
		}
		p[pre+"sasl.enabled.mechanisms"] = strings.Join(l.Mechanisms, ",")
		for _, m := range l.Mechanisms {
			mp := pre + strings.ToLower(m) + "."
			switch m {
			case MechanismPlain:
				var b strings.Builder
				b.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
				for _, u := range l.Users {
					fmt.Fprintf(&b, ` user_%s="%s"`, u.Name, u.Password)
				}
				b.WriteString(";")
				p[mp+"sasl.jaas.config"] = b.String()
			case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
				p[mp+"sasl.jaas.config"] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
			case MechanismOAuthBearer:
				p[mp+"sasl.jaas.config"] = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
				p[mp+"sasl.server.callback.handler.class"] = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
				p[pre+"sasl.oauthbearer.jwks.endpoint.url"] = l.OAuth.JWKSURL
				if l.OAuth.Issuer != "" {
					p[pre+"sasl.oauthbearer.expected.issuer"] = l.OAuth.Issuer
				}
				if l.OAuth.Audience != "" {
					p[pre+"sasl.oauthbearer.expected.audience"] = l.OAuth.Audience
				}
			}
		}
	}
	// The plaintext listener stays first: it is the inter-broker one.
	p["listeners"] = insertAfterFirst(p["listeners"], listeners)
	p["advertised.listeners"] = insertAfterFirst(p["advertised.listeners"], listeners)
	p["listener.security.protocol.map"] += "," + strings.Join(protos, ",")
}

// insertAfterFirst puts more after the first entry of the comma-separated
// list.
func insertAfterFirst(list string, more []string) string {
	first, rest, _ := strings.Cut(list, ",")
	all := append([]string{first}, more...)
	if rest != "" {
		all = append(all, rest)
	}
	return strings.Join(all, ",")
}

// scramArgs are the storage tool's --add-scram arguments that create the
// listeners' SCRAM users in the cluster metadata, sorted.
func scramArgs(ls []KafkaListener) []string {
	set := map[string]bool{}
	for _, l := range ls {
		for _, m := range l.Mechanisms {
			if !isSCRAM(m) {
				continue
			}
			for _, u := range l.Users {
				set[fmt.Sprintf("%s=[name=%s,password=%s]", m, u.Name, u.Password)] = true
			}
		}
	}
	var args []string
	for _, s := range slices.Sorted(maps.Keys(set)) {
		args = append(args, "--add-scram", s)
	}
	return args
}

// oauthJVMArgs allow the brokers' token validator to fetch the JWKS:
// Kafka 4 refuses any OAuth URL not listed in this system property.
func oauthJVMArgs(ls []KafkaListener) []string {
	for _, l := range ls {
		if l.OAuth != nil && slices.Contains(l.Mechanisms, MechanismOAuthBearer) {
			return []string{"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + l.OAuth.JWKSURL}
		}
	}
	return nil
}

// ListenerBootstrap is the comma-separated address list of the secured
// listener name, for its clients.
func (k *Kafka) ListenerBootstrap(name string) (string, error) {
	var s []string
	for _, n := range k.Nodes {
		port, ok := n.ListenerPorts[name]
		if !ok {
			return "", fmt.Errorf("localbrokers: the cluster has no listener %s (it has %v)", name, slices.Sorted(maps.Keys(n.ListenerPorts)))
		}
		s = append(s, k.hostname()+":"+strconv.Itoa(port))
	}
	if len(s) == 0 {
		return "", errors.New("localbrokers: the cluster has no nodes")
	}
	return strings.Join(s, ","), nil
}
