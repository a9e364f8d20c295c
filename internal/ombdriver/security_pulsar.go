package ombdriver

// The Pulsar driver file's security keys (OMB's client section:
// TLS, authentication plugins and their parameters) mapped onto Security.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

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
