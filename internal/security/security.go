// Package security turns a run's spec.cluster.existing.tls and
// authentication into what its clients need: the Secret keys to mount
// (Refs) and the driver's settings with the paths where those keys are
// found (Resolve). Both are pure, so the operator (which mounts the keys
// into the coordinator and the workers) and local mode (which writes them
// to private files) agree on what a run uses, and nothing else is mounted.
package security

import (
	"fmt"
	"slices"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// Keys Strimzi writes: the cluster CA Secret's certificate and a KafkaUser
// Secret's SCRAM password, certificate and key.
const (
	StrimziCAKey       = "ca.crt"
	StrimziPasswordKey = "password"
	StrimziUserCertKey = "user.crt"
	StrimziUserKeyKey  = "user.key"
)

// StrimziCASecret is the Secret in which Strimzi publishes the CA of
// cluster's listeners' certificates.
func StrimziCASecret(cluster string) string { return cluster + "-cluster-ca-cert" }

// Ref is one Secret key a run reads, and the spec field that names it (for
// errors that say which field to fix).
type Ref struct {
	v1alpha1.SecretKeyRef
	Field string
}

// PathFunc says where a Secret's key is found by the clients.
type PathFunc func(v1alpha1.SecretKeyRef) string

// Refs are the Secret keys a run's clients read, in the spec's order, each
// once. None for a run without spec.cluster.existing.tls or authentication.
func Refs(spec *v1alpha1.BenchmarkRunSpec) []Ref {
	e := spec.Cluster.Existing
	if e == nil {
		return nil
	}
	var refs []Ref
	add := func(field, name, key string) {
		r := Ref{SecretKeyRef: v1alpha1.SecretKeyRef{Name: name, Key: key}, Field: field}
		if !slices.ContainsFunc(refs, func(o Ref) bool { return o.SecretKeyRef == r.SecretKeyRef }) {
			refs = append(refs, r)
		}
	}
	const base = "spec.cluster.existing."
	if t := e.TLS; t != nil {
		switch {
		case t.CA != nil:
			add(base+"tls.ca", t.CA.Name, t.CA.Key)
		case e.StrimziCluster != nil && !t.InsecureSkipVerify:
			add(base+"tls.ca (the Strimzi cluster's CA, as spec.cluster.existing.strimziCluster names it)", StrimziCASecret(e.StrimziCluster.Name), StrimziCAKey)
		}
		if c := t.ClientCertificate; c != nil {
			add(base+"tls.clientCertificate", c.SecretName, orDefault(c.CertificateKey, "tls.crt"))
			add(base+"tls.clientCertificate", c.SecretName, orDefault(c.PrivateKeyKey, "tls.key"))
		}
	}
	if a := e.Authentication; a != nil {
		if u := a.StrimziKafkaUser; u != nil {
			const f = base + "authentication.strimziKafkaUser"
			switch u.Type {
			case v1alpha1.KafkaUserTLS:
				add(f, u.SecretName, StrimziUserCertKey)
				add(f, u.SecretName, StrimziUserKeyKey)
			default:
				add(f, u.SecretName, StrimziPasswordKey)
			}
		}
		if a.Password != nil {
			add(base+"authentication.password", a.Password.Name, a.Password.Key)
		}
		if a.Token != nil {
			add(base+"authentication.token", a.Token.Name, a.Token.Key)
		}
		if o := a.OAuth2; o != nil {
			add(base+"authentication.oauth2.clientSecret", o.ClientSecret.Name, o.ClientSecret.Key)
		}
	}
	return refs
}

// Resolve is the driver's security for spec, with every Secret key at
// path(ref); nil for a plaintext, anonymous cluster. It refuses what the
// schema cannot: a combination the driver could not honour.
func Resolve(spec *v1alpha1.BenchmarkRunSpec, path PathFunc) (*driver.Security, error) {
	e := spec.Cluster.Existing
	if e == nil || (e.TLS == nil && e.Authentication == nil) {
		return nil, nil
	}
	s := &driver.Security{}
	if t := e.TLS; t != nil {
		f := &driver.TLSFiles{
			ServerName:               t.ServerName,
			InsecureSkipVerify:       t.InsecureSkipVerify,
			SkipHostnameVerification: t.HostnameVerification != nil && !*t.HostnameVerification,
		}
		switch {
		case t.CA != nil:
			f.CAFile = path(*t.CA)
		case e.StrimziCluster != nil && !t.InsecureSkipVerify:
			f.CAFile = path(v1alpha1.SecretKeyRef{Name: StrimziCASecret(e.StrimziCluster.Name), Key: StrimziCAKey})
		}
		if c := t.ClientCertificate; c != nil {
			f.CertFile = path(v1alpha1.SecretKeyRef{Name: c.SecretName, Key: orDefault(c.CertificateKey, "tls.crt")})
			f.KeyFile = path(v1alpha1.SecretKeyRef{Name: c.SecretName, Key: orDefault(c.PrivateKeyKey, "tls.key")})
		}
		s.TLS = f
	}
	a := e.Authentication
	if a == nil {
		return s, nil
	}
	if u := a.StrimziKafkaUser; u != nil {
		if spec.System != v1alpha1.SystemKafka {
			return nil, fmt.Errorf("spec.cluster.existing.authentication.strimziKafkaUser applies to system kafka only")
		}
		switch u.Type {
		case v1alpha1.KafkaUserTLS:
			if s.TLS == nil {
				return nil, fmt.Errorf("spec.cluster.existing.authentication.strimziKafkaUser %s is of type tls (mutual TLS): set spec.cluster.existing.tls", u.SecretName)
			}
			if s.TLS.CertFile != "" {
				return nil, fmt.Errorf("spec.cluster.existing.tls.clientCertificate and authentication.strimziKafkaUser of type tls both give a client certificate; remove tls.clientCertificate")
			}
			s.TLS.CertFile = path(v1alpha1.SecretKeyRef{Name: u.SecretName, Key: StrimziUserCertKey})
			s.TLS.KeyFile = path(v1alpha1.SecretKeyRef{Name: u.SecretName, Key: StrimziUserKeyKey})
		case v1alpha1.KafkaUserScramSHA512, "":
			s.Mechanism = string(v1alpha1.AuthScramSHA512)
			s.Username = orDefault(u.Username, u.SecretName)
			s.PasswordFile = path(v1alpha1.SecretKeyRef{Name: u.SecretName, Key: StrimziPasswordKey})
		default:
			return nil, fmt.Errorf("spec.cluster.existing.authentication.strimziKafkaUser.type %q: want scram-sha-512 or tls", u.Type)
		}
		return s, nil
	}
	s.Mechanism = string(a.Mechanism)
	switch a.Mechanism {
	case v1alpha1.AuthPlain, v1alpha1.AuthScramSHA256, v1alpha1.AuthScramSHA512:
		if a.Username == "" || a.Password == nil {
			return nil, fmt.Errorf("spec.cluster.existing.authentication: mechanism %s needs username and password (a Secret key)", a.Mechanism)
		}
		s.Username = a.Username
		s.PasswordFile = path(*a.Password)
	case v1alpha1.AuthToken:
		if a.Token == nil {
			return nil, fmt.Errorf("spec.cluster.existing.authentication: mechanism Token needs token (a Secret key holding the JWT)")
		}
		s.TokenFile = path(*a.Token)
	case v1alpha1.AuthOAuthBearer, v1alpha1.AuthOAuth2:
		o := a.OAuth2
		if o == nil {
			return nil, fmt.Errorf("spec.cluster.existing.authentication: mechanism %s needs oauth2 (the client-credentials grant)", a.Mechanism)
		}
		s.OAuth2 = &driver.OAuth2Files{
			TokenEndpoint: o.TokenEndpoint, IssuerURL: o.IssuerURL, ClientID: o.ClientID,
			ClientSecretFile: path(o.ClientSecret), Scope: o.Scope, Audience: o.Audience,
		}
	default:
		return nil, fmt.Errorf("spec.cluster.existing.authentication.mechanism %q: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (kafka), Token or OAuth2 (pulsar)", a.Mechanism)
	}
	kafkaMech := s.Mechanism != string(v1alpha1.AuthToken) && s.Mechanism != string(v1alpha1.AuthOAuth2)
	if kafkaMech != (spec.System == v1alpha1.SystemKafka) {
		return nil, fmt.Errorf("spec.cluster.existing.authentication.mechanism %s does not apply to system %s: kafka takes PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER; pulsar takes Token or OAuth2", s.Mechanism, spec.System)
	}
	return s, nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
