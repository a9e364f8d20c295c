package ombdriver

// The Kafka driver file's security keys (OMB's commonConfig,
// producerConfig and consumerConfig properties) mapped onto Security.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

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
