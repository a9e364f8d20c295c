package ombdriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Security is what an OMB driver file says about reaching a secured
// cluster: the Java Kafka client's security.protocol, sasl.* and ssl.*
// keys, or the Pulsar client's TLS and authentication keys (OMB's own
// names and the Java client's). It holds the secret material as the file
// gives it (inline values, and files of the machine the file was written
// for), never printed: Write puts each piece into a private directory and
// returns the driver's settings with those paths.
//
// A cluster run never takes it (Map refuses security keys): a ConfigMap is
// not a Secret, and the OMB machine's paths do not exist in the pods.
type Security struct {
	// Keys are the file's keys that set it ("commonConfig: sasl.jaas.config"),
	// sorted; the values are not in them.
	Keys []string
	// Protocol is Kafka's security.protocol (PLAINTEXT, SSL,
	// SASL_PLAINTEXT, SASL_SSL) or Pulsar's scheme (pulsar, pulsar+ssl).
	Protocol string
	// TLS, when set, encrypts the connections.
	TLS *TLS
	// Mechanism is driver.Security's: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
	// OAUTHBEARER, Token, OAuth2; empty for none (or a client certificate
	// alone).
	Mechanism string
	// Username of PLAIN and SCRAM (not a secret).
	Username string
	// Password of PLAIN and SCRAM, Token of Pulsar's token.
	Password Secret
	Token    Secret
	// OAuth2 is the client-credentials grant of OAUTHBEARER and OAuth2.
	OAuth2 *OAuth2
}

// TLS is the TLS a driver file asks for.
type TLS struct {
	// Trust is the CAs to trust; nil means the system's (the Java
	// clients' default: the JDK's cacerts).
	Trust *Store
	// Client is the client's certificate and key, for mutual TLS.
	Client *Store
	// SkipHostnameVerification checks the chain but not the name
	// (Kafka's empty ssl.endpoint.identification.algorithm, Pulsar's
	// hostname verification off, its default).
	SkipHostnameVerification bool
	// InsecureSkipVerify accepts any certificate
	// (tlsAllowInsecureConnection).
	InsecureSkipVerify bool
}

// Store is a trust store or key store as a driver file names it: a file
// (PEM, JKS or PKCS12), or PEM written inline.
type Store struct {
	// Key is the file's key that names it.
	Key string
	// Path is a file of this machine; Type its declared type (PEM, JKS,
	// PKCS12; empty: sniffed).
	Path string
	Type string
	// PEM is inline PEM (Kafka's ssl.truststore.certificates,
	// ssl.keystore.certificate.chain).
	PEM Secret
	// KeyPEM is the private key apart from the certificate: inline
	// (ssl.keystore.key) or a file (Pulsar's tlsKeyFilePath).
	KeyPEM Secret
	// Password opens a JKS or PKCS12 store; KeyPassword its private key
	// when it differs (ssl.key.password).
	Password    Secret
	KeyPassword Secret
}

// OAuth2 is a client-credentials grant as a driver file gives it.
type OAuth2 struct {
	TokenEndpoint string
	IssuerURL     string
	// ClientID is given (Kafka's JAAS clientId), or read from KeyFile.
	ClientID     string
	ClientSecret Secret
	// KeyFile is Pulsar's privateKey: a JSON credentials file
	// (client_id, client_secret), as file:// or data: URL.
	KeyFile  Secret
	Scope    string
	Audience string
}

// Secret is one piece of secret material: a value written in the driver
// file, or the path of a file that holds it. It never prints its value
// (%v, %+v, %#v, %s all give the key it came from).
type Secret struct {
	// From is the file's key that gives it.
	From  string
	Path  string
	value string
}

// Set reports whether the file gave it.
func (s Secret) Set() bool { return s.From != "" }

// Format keeps the value out of every print.
func (s Secret) Format(f fmt.State, _ rune) {
	switch {
	case !s.Set():
		fmt.Fprint(f, "<unset>")
	case s.Path != "":
		fmt.Fprintf(f, "<secret in %s, from %s>", s.Path, s.From)
	default:
		fmt.Fprintf(f, "<secret from %s>", s.From)
	}
}

func inline(from, v string) Secret { return Secret{From: from, value: v} }
func inFile(from, p string) Secret { return Secret{From: from, Path: p} }

// fixInCluster is what a cluster run says about a driver file's security.
const fixInCluster = "a driver file's security settings are not read in a cluster: a ConfigMap is not a Secret, and the paths of the machine the file was written for do not exist in the pods; " +
	"remove them and set spec.cluster.existing.tls and spec.cluster.existing.authentication, whose keys come from Secrets " +
	"(streambench run --local --driver maps them on this machine)"

// refuseSecurity is Map's refusal of a file with security keys.
func refuseSecurity(f File) error {
	sec, _, err := MapSecurity(f)
	switch {
	case err != nil:
		return fmt.Errorf("%w\n%s", err, fixInCluster)
	case sec != nil && len(sec.Keys) > 0:
		return fmt.Errorf("%s: %s", strings.Join(sec.Keys, ", "), fixInCluster)
	}
	return nil
}

// MapSecurity reads the security a driver file asks for: nil for a
// plaintext, anonymous client. Keys the Java client would ignore (ssl.*
// under PLAINTEXT, Kerberos keys with another mechanism) or that only tune
// the Java client's login are returned as dropped, with the reason; a key
// that changes the security and cannot be honoured is an error naming it.
// It reads no file: Write does.
func MapSecurity(f File) (*Security, []Dropped, error) {
	switch f.System {
	case "kafka":
		return kafkaSecurity(f)
	case "pulsar":
		return pulsarSecurity(f)
	}
	return nil, nil, nil
}

// isSecurityKey: the key is one MapSecurity reads (not a client setting).
func isSecurityKey(system, section, k string) bool {
	if system == "kafka" {
		return k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
	}
	if section != "client" {
		return false
	}
	return slices.Contains(pulsarSecurityKeys, k) || strings.HasPrefix(k, "authentication.") || strings.HasPrefix(k, "authParamMap.")
}

// --- Kafka -----------------------------------------------------------------

type kafkaValue struct{ section, value string }

// kafkaSecurityKeys are the security keys the producers' (commonConfig
// then producerConfig) and consumers' (commonConfig then consumerConfig)
// properties end with, as OMB's driver builds them.
func kafkaSecurityKeys(f File) (map[string]kafkaValue, error) {
	side := func(over string, kv map[string]string) map[string]kafkaValue {
		out := map[string]kafkaValue{}
		for k, v := range f.CommonConfig {
			if isSecurityKey("kafka", "", k) {
				out[k] = kafkaValue{"commonConfig", v}
			}
		}
		for k, v := range kv {
			if isSecurityKey("kafka", "", k) {
				out[k] = kafkaValue{over, v}
			}
		}
		return out
	}
	prod, cons := side("producerConfig", f.ProducerConfig), side("consumerConfig", f.ConsumerConfig)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(merge(prod, cons))) {
		p, inP := prod[k]
		c, inC := cons[k]
		if inP != inC || p.value != c.value {
			where := func(v kafkaValue, in bool) string {
				if !in {
					return "not set"
				}
				return "set in " + v.section
			}
			errs = append(errs, fmt.Errorf("%s is %s for the producers and %s for the consumers: streambench's producers, consumers and admin client share one security configuration; put it in commonConfig once", k, where(p, inP), where(c, inC)))
		}
	}
	return merge(prod, cons), errors.Join(errs...)
}

func merge[M ~map[K]V, K comparable, V any](a, b M) M {
	out := maps.Clone(a)
	if out == nil {
		out = M{}
	}
	maps.Copy(out, b)
	return out
}

// Java's OAUTHBEARER client-credentials login callback handler, before and
// after Kafka 3.4 moved it (KIP-768).
var oauthHandlers = []string{
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
}

var jaasModules = map[string]string{
	"PLAIN":         "org.apache.kafka.common.security.plain.PlainLoginModule",
	"SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
	"SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
	"OAUTHBEARER":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}

func kafkaSecurity(f File) (*Security, []Dropped, error) {
	kv, err := kafkaSecurityKeys(f)
	if err != nil {
		return nil, nil, err
	}
	if len(kv) == 0 {
		return nil, nil, nil
	}
	label := func(k string) string { return kv[k].section + ": " + k }
	get := func(k string) (string, bool) { v, ok := kv[k]; return v.value, ok }
	var dropped []Dropped
	var errs []error
	var used []string
	use := func(k string) { used = append(used, label(k)) }
	refuse := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", label(k), fmt.Sprintf(format, args...)))
	}

	proto := "PLAINTEXT"
	if v, ok := get("security.protocol"); ok {
		proto = strings.ToUpper(strings.TrimSpace(v))
		switch proto {
		case "PLAINTEXT":
			dropped = append(dropped, Dropped{label("security.protocol") + "=" + v, "plaintext, the default"})
		case "SSL", "SASL_PLAINTEXT", "SASL_SSL":
			use("security.protocol")
		default:
			refuse("security.protocol", "%q is not a Kafka security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", v)
			return nil, dropped, errors.Join(errs...)
		}
	}
	useTLS, useSASL := proto == "SSL" || proto == "SASL_SSL", strings.HasPrefix(proto, "SASL_")
	s := &Security{Protocol: proto}
	if useTLS {
		s.TLS = &TLS{}
	}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		v := kv[k].value
		switch {
		case k == "security.protocol":
		case strings.HasPrefix(k, "ssl.") && !useTLS:
			dropped = append(dropped, Dropped{label(k), fmt.Sprintf("the Java client ignores ssl.* keys under security.protocol %s", proto)})
		case strings.HasPrefix(k, "sasl.") && !useSASL:
			dropped = append(dropped, Dropped{label(k), fmt.Sprintf("the Java client ignores sasl.* keys under security.protocol %s", proto)})
		case strings.HasPrefix(k, "ssl."):
			kafkaSSLKey(s.TLS, k, v, label, use, refuse, &dropped)
		default:
			kafkaSASLKey(k, v, label, use, refuse, &dropped)
		}
	}
	if useSASL {
		mech, ok := get("sasl.mechanism")
		if !ok {
			// The Java client's default.
			mech = "GSSAPI"
		}
		kafkaSASL(s, mech, ok, kv, label, refuse)
	}
	if s.TLS != nil {
		if err := kafkaStores(s.TLS, get, label); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, dropped, err
	}
	if proto == "PLAINTEXT" {
		return nil, dropped, nil
	}
	slices.Sort(used)
	s.Keys = slices.Compact(used)
	return s, dropped, nil
}

// kafkaSSLKey sorts one ssl.* key of a TLS client: read by kafkaStores,
// dropped (Java plumbing with no effect on the connection), or refused.
func kafkaSSLKey(t *TLS, k, v string, label func(string) string, use func(string), refuse func(string, string, ...any), dropped *[]Dropped) {
	switch k {
	case "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates",
		"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
		"ssl.keystore.certificate.chain", "ssl.keystore.key":
		use(k)
	case "ssl.endpoint.identification.algorithm":
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
			t.SkipHostnameVerification = true
			use(k)
		case "https":
			use(k)
		default:
			refuse(k, "%q: the Java client knows https (check the broker's name, the default) or empty (do not)", v)
		}
	case "ssl.protocol":
		switch v {
		case "TLS", "TLSv1.2", "TLSv1.3":
			*dropped = append(*dropped, Dropped{label(k) + "=" + v, "streambench's clients offer TLS 1.2 and 1.3 and the results record the version negotiated"})
		default:
			refuse(k, "%q: streambench's clients speak TLS 1.2 and 1.3 only", v)
		}
	case "ssl.enabled.protocols":
		if slices.Contains(splitList(v), "TLSv1.3") {
			*dropped = append(*dropped, Dropped{label(k) + "=" + v, "streambench's clients offer TLS 1.2 and 1.3 and the results record the version negotiated"})
		} else {
			refuse(k, "%q: streambench's clients offer TLS 1.2 and 1.3 and cannot be held to an older version; remove it, or list TLSv1.3", v)
		}
	case "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm":
		def := map[string]string{"ssl.keymanager.algorithm": "SunX509", "ssl.trustmanager.algorithm": "PKIX"}[k]
		if v == def {
			*dropped = append(*dropped, Dropped{label(k) + "=" + v, "the JDK's default; Go's TLS verifies the chain as PKIX does"})
		} else {
			refuse(k, "%q is a JDK key or trust manager; streambench's clients have Go's TLS only; remove it", v)
		}
	case "ssl.secure.random.implementation":
		*dropped = append(*dropped, Dropped{label(k) + "=" + v, "Go's TLS uses crypto/rand"})
	case "ssl.cipher.suites":
		refuse(k, "streambench's clients use Go's TLS cipher suites (TLS 1.3's are fixed) and cannot be limited to the JDK's names; remove it (the results record the TLS version)")
	default:
		refuse(k, "streambench does not map this TLS setting of the Java client (it maps ssl.truststore.*, ssl.keystore.*, ssl.key.password and ssl.endpoint.identification.algorithm); remove it")
	}
}

// kafkaSASLKey sorts one sasl.* key of a SASL client; sasl.mechanism and
// sasl.jaas.config are read by kafkaSASL.
func kafkaSASLKey(k, v string, label func(string) string, use func(string), refuse func(string, string, ...any), dropped *[]Dropped) {
	switch {
	case k == "sasl.mechanism", k == "sasl.jaas.config", k == "sasl.oauthbearer.token.endpoint.url":
		use(k)
	case k == "sasl.login.callback.handler.class":
		if slices.Contains(oauthHandlers, v) {
			use(k)
		} else {
			refuse(k, "%s is not Kafka's OAUTHBEARER client-credentials handler; streambench's clients cannot load Java classes (AWS MSK IAM and other custom logins are not supported)", v)
		}
	case k == "sasl.client.callback.handler.class", k == "sasl.login.class":
		refuse(k, "%s is a Java class; streambench's clients cannot load it (AWS MSK IAM and other custom logins are not supported)", v)
	case strings.HasPrefix(k, "sasl.login.refresh."), strings.HasPrefix(k, "sasl.login.retry.backoff."),
		k == "sasl.login.connect.timeout.ms", k == "sasl.login.read.timeout.ms":
		*dropped = append(*dropped, Dropped{label(k) + "=" + v, "how the Java client times its login and token refresh; franz-go logs in and refreshes on its own"})
	case strings.HasPrefix(k, "sasl.oauthbearer."):
		*dropped = append(*dropped, Dropped{label(k) + "=" + v, "checks the Java client makes of the token it got (streambench's client sends the token the endpoint gives; the brokers validate it)"})
	case strings.HasPrefix(k, "sasl.kerberos."):
		*dropped = append(*dropped, Dropped{label(k), "Kerberos (GSSAPI) only"})
	default:
		refuse(k, "streambench does not map this SASL setting of the Java client (it maps sasl.mechanism, sasl.jaas.config and sasl.oauthbearer.token.endpoint.url); remove it")
	}
}

// kafkaSASL reads sasl.mechanism and sasl.jaas.config.
func kafkaSASL(s *Security, mech string, given bool, kv map[string]kafkaValue, label func(string) string, refuse func(string, string, ...any)) {
	module, ok := jaasModules[mech]
	if !ok {
		k := "sasl.mechanism"
		if !given {
			refuse("security.protocol", "%s without sasl.mechanism is GSSAPI (Kerberos) in the Java client, which streambench's clients do not support; set sasl.mechanism to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", s.Protocol)
			return
		}
		why := "streambench's clients support PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER"
		switch mech {
		case "GSSAPI":
			why = "Kerberos is not supported; " + why
		case "AWS_MSK_IAM":
			why = "AWS MSK IAM is not supported; " + why
		}
		refuse(k, "%q: %s", mech, why)
		return
	}
	s.Mechanism = mech
	jv, ok := kv["sasl.jaas.config"]
	if !ok {
		refuse("sasl.mechanism", "%s needs sasl.jaas.config (%s required ...;): streambench does not read a JVM's JAAS file", mech, module)
		return
	}
	const k = "sasl.jaas.config"
	j, err := parseJAAS(jv.value)
	if err != nil {
		refuse(k, "%v", err)
		return
	}
	if j.module != module {
		refuse(k, "the login module %s does not go with sasl.mechanism %s; use %s", j.module, mech, module)
		return
	}
	from := label(k)
	var extra []string
	switch mech {
	case "OAUTHBEARER":
		o := &OAuth2{ClientID: j.options["clientId"], Scope: j.options["scope"]}
		if sec, ok := j.options["clientSecret"]; ok {
			o.ClientSecret = inline(from+" (clientSecret)", sec)
		}
		for _, name := range slices.Sorted(maps.Keys(j.options)) {
			switch {
			case name == "clientId", name == "clientSecret", name == "scope":
			case strings.HasPrefix(name, "unsecuredLogin"):
				refuse(k, "option %s asks for an unsecured (unsigned) token; streambench's OAUTHBEARER is the client-credentials grant: give clientId, clientSecret and sasl.oauthbearer.token.endpoint.url", name)
				return
			case strings.HasPrefix(name, "extension_"):
				refuse(k, "option %s is a SASL extension, which streambench's OAUTHBEARER client does not send; remove it", name)
				return
			default:
				extra = append(extra, name)
			}
		}
		if o.ClientID == "" || !o.ClientSecret.Set() {
			refuse(k, "OAuthBearerLoginModule needs clientId and clientSecret (the client-credentials grant)")
			return
		}
		ep, ok := kv["sasl.oauthbearer.token.endpoint.url"]
		if !ok {
			refuse(k, "OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url, the token endpoint of the client-credentials grant")
			return
		}
		if u, err := url.Parse(ep.value); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			refuse("sasl.oauthbearer.token.endpoint.url", "must be an http(s):// URL (a file:// token is not supported)")
			return
		}
		o.TokenEndpoint = ep.value
		s.OAuth2 = o
	default:
		s.Username = j.options["username"]
		if pw, ok := j.options["password"]; ok {
			s.Password = inline(from+" (password)", pw)
		}
		for _, name := range slices.Sorted(maps.Keys(j.options)) {
			switch name {
			case "username", "password":
			case "tokenauth":
				refuse(k, "option tokenauth (delegation tokens) is not supported; give the user's own password")
				return
			default:
				extra = append(extra, name)
			}
		}
		if s.Username == "" || !s.Password.Set() {
			refuse(k, "%s needs username and password", module)
			return
		}
	}
	if len(extra) > 0 {
		refuse(k, "option %s is not one streambench maps (for %s: %s); remove it", strings.Join(extra, ", "), mech, map[bool]string{true: "clientId, clientSecret, scope", false: "username, password"}[mech == "OAUTHBEARER"])
	}
}

// kafkaStores reads the trust store and key store keys.
func kafkaStores(t *TLS, get func(string) (string, bool), label func(string) string) error {
	var errs []error
	typ := func(k string) string {
		v, ok := get(k)
		if !ok {
			return "JKS" // the Java client's default
		}
		return strings.ToUpper(strings.TrimSpace(v))
	}
	secret := func(k string) Secret {
		if v, ok := get(k); ok && v != "" {
			return inline(label(k), v)
		}
		return Secret{}
	}
	// Trust store.
	loc, hasLoc := get("ssl.truststore.location")
	certs, hasCerts := get("ssl.truststore.certificates")
	tt := typ("ssl.truststore.type")
	switch {
	case hasLoc && hasCerts:
		errs = append(errs, fmt.Errorf("%s and %s both give the trusted CAs; keep one", label("ssl.truststore.location"), label("ssl.truststore.certificates")))
	case hasCerts:
		if tt != "PEM" {
			errs = append(errs, fmt.Errorf("%s needs ssl.truststore.type=PEM", label("ssl.truststore.certificates")))
		}
		t.Trust = &Store{Key: label("ssl.truststore.certificates"), Type: "PEM", PEM: inline(label("ssl.truststore.certificates"), certs)}
	case hasLoc && loc != "":
		t.Trust = &Store{Key: label("ssl.truststore.location"), Path: loc, Type: tt, Password: secret("ssl.truststore.password")}
	}
	if err := checkStoreType(tt, "ssl.truststore.type", label); err != nil {
		errs = append(errs, err)
	}
	// Key store (the client's certificate).
	loc, hasLoc = get("ssl.keystore.location")
	chain, hasChain := get("ssl.keystore.certificate.chain")
	_, hasKey := get("ssl.keystore.key")
	kt := typ("ssl.keystore.type")
	switch {
	case hasLoc && (hasChain || hasKey):
		errs = append(errs, fmt.Errorf("%s and ssl.keystore.certificate.chain/ssl.keystore.key both give the client's certificate; keep one", label("ssl.keystore.location")))
	case hasChain != hasKey:
		errs = append(errs, fmt.Errorf("ssl.keystore.certificate.chain and ssl.keystore.key go together (the client's PEM certificate and its key)"))
	case hasChain:
		if kt != "PEM" {
			errs = append(errs, fmt.Errorf("%s needs ssl.keystore.type=PEM", label("ssl.keystore.certificate.chain")))
		}
		t.Client = &Store{Key: label("ssl.keystore.certificate.chain"), Type: "PEM", PEM: inline(label("ssl.keystore.certificate.chain"), chain),
			KeyPEM: secret("ssl.keystore.key"), KeyPassword: secret("ssl.key.password")}
	case hasLoc && loc != "":
		t.Client = &Store{Key: label("ssl.keystore.location"), Path: loc, Type: kt,
			Password: secret("ssl.keystore.password"), KeyPassword: secret("ssl.key.password")}
	}
	if err := checkStoreType(kt, "ssl.keystore.type", label); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func checkStoreType(typ, k string, label func(string) string) error {
	switch typ {
	case "JKS", "PKCS12", "PEM":
		return nil
	}
	return fmt.Errorf("%s: %q is not a store type streambench reads; use JKS, PKCS12 or PEM", label(k), typ)
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// --- Pulsar ----------------------------------------------------------------

// pulsarSecurityKeys are the client section's security keys: OMB's
// PulsarClientConfig names them tlsAllowInsecureConnection,
// tlsEnableHostnameVerification, tlsTrustCertsFilePath and
// authentication.plugin/.data; the Java client's (client.conf,
// ClientConfigurationData) authPlugin(ClassName), authParams, useTls,
// tlsHostnameVerificationEnable, the key store ones and the PEM client
// certificate.
var pulsarSecurityKeys = []string{
	"useTls", "tlsAllowInsecureConnection", "tlsEnableHostnameVerification", "tlsHostnameVerificationEnable",
	"tlsTrustCertsFilePath", "tlsCertificateFilePath", "tlsKeyFilePath",
	"useKeyStoreTls", "tlsTrustStoreType", "tlsTrustStorePath", "tlsTrustStorePassword",
	"tlsKeyStoreType", "tlsKeyStorePath", "tlsKeyStorePassword",
	"tlsProtocols", "tlsCiphers", "sslProvider",
	"authPlugin", "authPluginClassName", "authParams",
}

// Pulsar's authentication plugins, by the Java class name (OMB's files and
// client.conf) or pulsar-client-go's short name.
var pulsarPlugins = map[string]string{
	"org.apache.pulsar.client.impl.auth.AuthenticationToken": "Token",
	"token": "Token",
	"org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2": "OAuth2",
	"oauth2": "OAuth2",
	"org.apache.pulsar.client.impl.auth.AuthenticationTls": "TLS",
	"tls": "TLS",
	"org.apache.pulsar.client.impl.auth.AuthenticationDisabled": "",
}

func pulsarSecurity(f File) (*Security, []Dropped, error) {
	c := f.Client
	label := func(k string) string { return "client: " + k }
	var dropped []Dropped
	var errs []error
	var used []string
	refuse := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", label(k), fmt.Sprintf(format, args...)))
	}
	// The same setting under OMB's name and the Java client's.
	one := func(a, b string) (string, string, bool) {
		va, oka := c[a]
		vb, okb := c[b]
		switch {
		case oka && okb && va != vb:
			refuse(b, "disagrees with %s; keep one", a)
			return "", "", false
		case oka:
			return a, va, true
		case okb:
			return b, vb, true
		}
		return "", "", false
	}
	boolKey := func(k, v string) bool {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true
		case "false":
			return false
		}
		refuse(k, "must be true or false, got %q", v)
		return false
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		switch {
		case k == "tlsProtocols", k == "tlsCiphers":
			refuse(k, "streambench's clients use Go's TLS (versions 1.2 and 1.3, its cipher suites) and cannot be limited to the JDK's names; remove it (the results record the TLS version)")
		case k == "sslProvider":
			dropped = append(dropped, Dropped{label(k) + "=" + c[k], "the Java client's TLS engine; streambench's clients have Go's TLS"})
		case strings.HasPrefix(k, "authParamMap."):
			refuse(k, "give the parameters as authParams (a string), which streambench maps")
		}
	}

	sec := &Security{Protocol: "pulsar"}
	// OMB applies the TLS keys when serviceUrl is pulsar+ssl:// (httpUrl
	// https:// for the admin client), as the Java client turns TLS on.
	// (Contains: OMB's astra.yaml writes ${pulsarServiceUrl:-pulsar+ssl://...}
	// for its deployment scripts to substitute.)
	tlsOn := strings.Contains(c["serviceUrl"], "pulsar+ssl://") || strings.Contains(c["httpUrl"], "https://")
	if v, ok := c["useTls"]; ok && boolKey("useTls", v) {
		tlsOn = true
		used = append(used, label("useTls"))
	}
	t := &TLS{SkipHostnameVerification: true} // off by default in OMB and the Java client
	tlsKeys := []string{}
	if v := c["tlsTrustCertsFilePath"]; v != "" {
		t.Trust = &Store{Key: label("tlsTrustCertsFilePath"), Path: v, Type: "PEM"}
		tlsKeys = append(tlsKeys, "tlsTrustCertsFilePath")
	}
	keyStore := false
	if v, ok := c["useKeyStoreTls"]; ok {
		if keyStore = boolKey("useKeyStoreTls", v); keyStore {
			tlsKeys = append(tlsKeys, "useKeyStoreTls")
		} else {
			dropped = append(dropped, Dropped{label("useKeyStoreTls") + "=" + v, "the default: PEM files, not key stores"})
		}
	}
	storeKeys := []string{"tlsTrustStoreType", "tlsTrustStorePath", "tlsTrustStorePassword", "tlsKeyStoreType", "tlsKeyStorePath", "tlsKeyStorePassword"}
	for _, k := range storeKeys {
		if _, ok := c[k]; !ok {
			continue
		}
		if !keyStore {
			dropped = append(dropped, Dropped{label(k), "the Java client reads it only with useKeyStoreTls: true"})
			continue
		}
		tlsKeys = append(tlsKeys, k)
	}
	if keyStore {
		typ := func(k string) string {
			if v, ok := c[k]; ok {
				return strings.ToUpper(strings.TrimSpace(v))
			}
			return "JKS"
		}
		pw := func(k string) Secret {
			if v := c[k]; v != "" {
				return inline(label(k), v)
			}
			return Secret{}
		}
		if p := c["tlsTrustStorePath"]; p != "" {
			if t.Trust != nil {
				refuse("tlsTrustStorePath", "and tlsTrustCertsFilePath both give the trusted CAs; keep one")
			}
			t.Trust = &Store{Key: label("tlsTrustStorePath"), Path: p, Type: typ("tlsTrustStoreType"), Password: pw("tlsTrustStorePassword")}
			if err := checkStoreType(t.Trust.Type, "tlsTrustStoreType", label); err != nil {
				errs = append(errs, err)
			}
		}
		if p := c["tlsKeyStorePath"]; p != "" {
			t.Client = &Store{Key: label("tlsKeyStorePath"), Path: p, Type: typ("tlsKeyStoreType"), Password: pw("tlsKeyStorePassword")}
			if err := checkStoreType(t.Client.Type, "tlsKeyStoreType", label); err != nil {
				errs = append(errs, err)
			}
		}
	}
	cert, hasCert := c["tlsCertificateFilePath"]
	key, hasKey := c["tlsKeyFilePath"]
	switch {
	case hasCert != hasKey:
		refuse(map[bool]string{true: "tlsCertificateFilePath", false: "tlsKeyFilePath"}[hasCert], "tlsCertificateFilePath and tlsKeyFilePath go together (the client's PEM certificate and its key)")
	case hasCert:
		if t.Client != nil {
			refuse("tlsCertificateFilePath", "and tlsKeyStorePath both give the client's certificate; keep one")
		}
		t.Client = &Store{Key: label("tlsCertificateFilePath"), Path: cert, Type: "PEM", KeyPEM: inFile(label("tlsKeyFilePath"), key)}
		tlsKeys = append(tlsKeys, "tlsCertificateFilePath", "tlsKeyFilePath")
	}

	// Authentication.
	pk, plugin, hasPlugin := one("authentication.plugin", "authPlugin")
	if !hasPlugin {
		pk, plugin, hasPlugin = one("authentication.plugin", "authPluginClassName")
	}
	ak, params, hasParams := one("authentication.data", "authParams")
	mech, known := pulsarPlugins[strings.TrimSpace(plugin)]
	switch {
	case !hasPlugin || strings.TrimSpace(plugin) == "":
		if hasParams {
			dropped = append(dropped, Dropped{label(ak), "authentication parameters without a plugin: the Java client does not authenticate"})
		}
	case !known:
		refuse(pk, "%s is not an authentication plugin streambench's Pulsar client maps; it maps AuthenticationToken, AuthenticationOAuth2 and AuthenticationTls", plugin)
	case mech == "":
		dropped = append(dropped, Dropped{label(pk), "authentication disabled"})
	default:
		used = append(used, label(pk))
		if hasParams {
			used = append(used, label(ak))
		}
		pulsarAuth(sec, t, &tlsKeys, mech, label(ak), params, hasParams, func(format string, args ...any) { refuse(ak, format, args...) })
		if mech == "TLS" {
			tlsOn = true
		}
	}

	// A certificate named turns TLS on: with the run's own service URL
	// (spec.cluster.existing) the file's pulsar:// one is not used.
	if t.Trust != nil || t.Client != nil || keyStore {
		tlsOn = true
	}
	hk, hv, hasH := one("tlsEnableHostnameVerification", "tlsHostnameVerificationEnable")
	for _, k := range []string{"tlsAllowInsecureConnection", "tlsEnableHostnameVerification", "tlsHostnameVerificationEnable"} {
		v, ok := c[k]
		if !ok {
			continue
		}
		if !tlsOn {
			dropped = append(dropped, Dropped{label(k) + "=" + v, "applies to TLS only, and the file's service URL is pulsar:// with no TLS certificates named"})
			continue
		}
		used = append(used, label(k))
		if k == "tlsAllowInsecureConnection" {
			t.InsecureSkipVerify = boolKey(k, v)
		} else if hasH && k == hk {
			t.SkipHostnameVerification = !boolKey(k, hv)
		}
	}
	for _, k := range tlsKeys {
		used = append(used, label(k))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, dropped, err
	}
	if tlsOn {
		sec.TLS = t
		sec.Protocol = "pulsar+ssl"
	}
	if sec.TLS == nil && sec.Mechanism == "" {
		return nil, dropped, nil
	}
	slices.Sort(used)
	sec.Keys = slices.Compact(used)
	return sec, dropped, nil
}

// pulsarAuth reads a plugin's parameters as its Java class does.
func pulsarAuth(s *Security, t *TLS, tlsKeys *[]string, mech, from, params string, has bool, refuse func(string, ...any)) {
	switch mech {
	case "Token":
		s.Mechanism = "Token"
		if !has || strings.TrimSpace(params) == "" {
			refuse("AuthenticationToken needs the token: token:<JWT> or file:///path/to/token")
			return
		}
		// AuthenticationToken.configure: "token:..." or "file:..." or a JSON
		// object with token (or file), else the whole string is the token.
		p := strings.TrimSpace(params)
		switch {
		case strings.HasPrefix(p, "token:"):
			s.Token = inline(from, strings.TrimPrefix(p, "token:"))
		case strings.HasPrefix(p, "file:"):
			path, err := fileURL(p)
			if err != nil {
				refuse("%v", err)
				return
			}
			s.Token = inFile(from, path)
		case strings.HasPrefix(p, "{"):
			var m map[string]string
			if err := json.Unmarshal([]byte(p), &m); err != nil {
				refuse("is neither token:<JWT>, file:///path nor a JSON object of strings with token or file")
				return
			}
			switch {
			case m["token"] != "":
				s.Token = inline(from, m["token"])
			case m["file"] != "":
				path, err := fileURL(m["file"])
				if err != nil {
					refuse("%v", err)
					return
				}
				s.Token = inFile(from, path)
			default:
				refuse("the JSON object has neither token nor file")
				return
			}
		default:
			s.Token = inline(from, p)
		}
		if !s.Token.Set() || (s.Token.Path == "" && s.Token.value == "") {
			refuse("the token is empty")
		} else if strings.Contains(s.Token.value, "${") {
			refuse("the token holds a ${...} placeholder: substitute it before giving the file (e.g. envsubst)")
		}
	case "OAuth2":
		s.Mechanism = "OAuth2"
		m, err := pulsarParams(params)
		if err != nil || !has {
			refuse("AuthenticationOAuth2 needs its parameters as JSON: {\"type\":\"client_credentials\",\"issuerUrl\":...,\"privateKey\":\"file:///path/key.json\",\"audience\":...}")
			return
		}
		o := &OAuth2{IssuerURL: m["issuerUrl"], Audience: m["audience"], Scope: m["scope"]}
		var bad []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			switch k {
			case "type", "issuerUrl", "privateKey", "audience", "scope":
			default:
				bad = append(bad, k)
			}
		}
		switch {
		case len(bad) > 0:
			refuse("parameter %s is not one of AuthenticationOAuth2's (type, issuerUrl, privateKey, audience, scope)", strings.Join(bad, ", "))
			return
		case m["type"] != "" && m["type"] != "client_credentials":
			refuse("type %q: streambench's OAuth2 is the client_credentials flow", m["type"])
			return
		case o.IssuerURL == "":
			refuse("AuthenticationOAuth2 needs issuerUrl")
			return
		case m["privateKey"] == "":
			refuse("AuthenticationOAuth2 needs privateKey, the credentials file (file:///path/key.json) with client_id and client_secret")
			return
		}
		if u, err := url.Parse(o.IssuerURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			refuse("issuerUrl must be an http(s):// URL")
			return
		}
		pk := m["privateKey"]
		switch {
		case strings.HasPrefix(pk, "data:"):
			o.KeyFile = inline(from+" (privateKey)", pk)
		default:
			path, err := fileURL(pk)
			if err != nil {
				refuse("privateKey: %v", err)
				return
			}
			o.KeyFile = inFile(from+" (privateKey)", path)
		}
		s.OAuth2 = o
	case "TLS":
		// AuthenticationTls: the client certificate is the identity.
		m, err := pulsarParams(params)
		if err != nil || !has || m["tlsCertFile"] == "" || m["tlsKeyFile"] == "" {
			refuse("AuthenticationTls needs tlsCertFile:/path/cert.pem,tlsKeyFile:/path/key.pem")
			return
		}
		if t.Client != nil {
			refuse("AuthenticationTls and %s both give the client's certificate; keep one", t.Client.Key)
			return
		}
		t.Client = &Store{Key: from, Path: strings.TrimPrefix(m["tlsCertFile"], "file://"), Type: "PEM", KeyPEM: inFile(from+" (tlsKeyFile)", strings.TrimPrefix(m["tlsKeyFile"], "file://"))}
	}
}

// pulsarParams reads a plugin's parameter string as the Java client does:
// a JSON object, or key:value pairs separated by commas.
func pulsarParams(p string) (map[string]string, error) {
	p = strings.TrimSpace(p)
	m := map[string]string{}
	if strings.HasPrefix(p, "{") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(p), &raw); err != nil {
			return nil, errors.New("not a JSON object")
		}
		for k, v := range raw {
			m[k] = fmt.Sprint(v)
		}
		return m, nil
	}
	for _, kv := range strings.Split(p, ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			return nil, errors.New("not key:value pairs")
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

// fileURL is the path of a file: URL (file:///path, file:/path) or a
// plain path.
func fileURL(s string) (string, error) {
	if !strings.HasPrefix(s, "file:") {
		if strings.Contains(s, "://") {
			return "", fmt.Errorf("%s: want a file:///path (or a path)", strings.SplitN(s, "://", 2)[0]+"://")
		}
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
		return "", errors.New("want file:///absolute/path")
	}
	return u.Path, nil
}
