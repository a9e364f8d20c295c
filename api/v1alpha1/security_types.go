package v1alpha1

// Security of an existing cluster's client connections: TLS and
// authentication. Production clusters rarely accept a plaintext, anonymous
// client (Strimzi's tls listener with KafkaUsers, MSK and Confluent Cloud's
// SASL over TLS, StreamNative's TLS with a token or OAuth2), and TLS and
// authentication change the numbers, so a run states them and the report
// and compare show them.
//
// Every secret value comes from a Secret of the run's namespace, by
// reference: the operator mounts only the keys a run names, read-only, into
// the coordinator and the workers, and no value reaches the spec, status,
// results, events, logs or the report.

// SecretKeyRef names one key of a Secret in the run's namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// ClientTLS encrypts the clients' connections: Kafka's SSL (or SASL_SSL
// with authentication), Pulsar's pulsar+ssl:// service URL and https://
// admin URL.
type ClientTLS struct {
	// CA is a PEM bundle of the certificate authorities that sign the
	// brokers' certificates. Empty means the system's roots, or for
	// spec.cluster.existing.strimziCluster the cluster's own CA (the
	// Secret <cluster>-cluster-ca-cert, key ca.crt, which Strimzi writes
	// in the Kafka's namespace: the run must be in that namespace).
	// +optional
	CA *SecretKeyRef `json:"ca,omitempty"`
	// ServerName is the name the brokers' certificates must carry
	// (SNI and verification). Empty means the host of each address.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`
	// ClientCertificate is the clients' certificate for mutual TLS.
	// +optional
	ClientCertificate *ClientCertificate `json:"clientCertificate,omitempty"`
	// HostnameVerification checks that a broker's certificate names the
	// host (or serverName). Default true; false still checks the chain
	// (Pulsar's tlsHostnameVerificationEnable=false, Kafka's empty
	// ssl.endpoint.identification.algorithm).
	// +optional
	HostnameVerification *bool `json:"hostnameVerification,omitempty"`
	// InsecureSkipVerify accepts any certificate (Pulsar's
	// tlsAllowInsecureConnection): the connection is encrypted but the
	// broker is not authenticated. For test clusters only; the report
	// says so.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// ClientCertificate is a PEM certificate and its private key in one Secret.
type ClientCertificate struct {
	// SecretName is a kubernetes.io/tls Secret (tls.crt, tls.key) or any
	// Secret with the keys named below.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
	// CertificateKey is the key of the PEM certificate (chain).
	// +kubebuilder:default="tls.crt"
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	CertificateKey string `json:"certificateKey,omitempty"`
	// PrivateKeyKey is the key of the PEM private key.
	// +kubebuilder:default="tls.key"
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	PrivateKeyKey string `json:"privateKeyKey,omitempty"`
}

// AuthMechanism is how the clients authenticate: Kafka's SASL mechanisms
// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER) or Pulsar's
// authentication plugins (Token, OAuth2).
// +kubebuilder:validation:Enum=PLAIN;SCRAM-SHA-256;SCRAM-SHA-512;OAUTHBEARER;Token;OAuth2
type AuthMechanism string

const (
	AuthPlain       AuthMechanism = "PLAIN"
	AuthScramSHA256 AuthMechanism = "SCRAM-SHA-256"
	AuthScramSHA512 AuthMechanism = "SCRAM-SHA-512"
	AuthOAuthBearer AuthMechanism = "OAUTHBEARER"
	AuthToken       AuthMechanism = "Token"
	AuthOAuth2      AuthMechanism = "OAuth2"
)

// KafkaUserAuthType is a Strimzi KafkaUser's spec.authentication.type.
// +kubebuilder:validation:Enum=scram-sha-512;tls
type KafkaUserAuthType string

const (
	KafkaUserScramSHA512 KafkaUserAuthType = "scram-sha-512"
	KafkaUserTLS         KafkaUserAuthType = "tls"
)

// ClientAuthentication is how the clients authenticate: a mechanism with
// its credentials, or a Strimzi KafkaUser's Secret.
// +kubebuilder:validation:XValidation:rule="has(self.mechanism) != has(self.strimziKafkaUser)",message="spec.cluster.existing.authentication: set exactly one of mechanism (with its credentials) or strimziKafkaUser (a KafkaUser's Secret)"
// +kubebuilder:validation:XValidation:rule="!has(self.mechanism) || !(self.mechanism in ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) || (has(self.username) && has(self.password))",message="spec.cluster.existing.authentication: mechanism PLAIN and SCRAM need username and password (a Secret key)"
// +kubebuilder:validation:XValidation:rule="!has(self.mechanism) || self.mechanism != 'Token' || has(self.token)",message="spec.cluster.existing.authentication: mechanism Token needs token (a Secret key holding the JWT)"
// +kubebuilder:validation:XValidation:rule="!has(self.mechanism) || !(self.mechanism in ['OAUTHBEARER', 'OAuth2']) || has(self.oauth2)",message="spec.cluster.existing.authentication: mechanism OAUTHBEARER and OAuth2 need oauth2 (the client-credentials grant)"
// +kubebuilder:validation:XValidation:rule="!has(self.password) || (has(self.mechanism) && self.mechanism in ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])",message="spec.cluster.existing.authentication.password applies to mechanism PLAIN and SCRAM only; remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.token) || (has(self.mechanism) && self.mechanism == 'Token')",message="spec.cluster.existing.authentication.token applies to mechanism Token only; remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.oauth2) || (has(self.mechanism) && self.mechanism in ['OAUTHBEARER', 'OAuth2'])",message="spec.cluster.existing.authentication.oauth2 applies to mechanism OAUTHBEARER and OAuth2 only; remove it"
type ClientAuthentication struct {
	// Mechanism is the SASL mechanism (Kafka) or authentication plugin
	// (Pulsar).
	// +optional
	Mechanism AuthMechanism `json:"mechanism,omitempty"`
	// Username for PLAIN and SCRAM. A user name is not a secret; its
	// password is.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Username string `json:"username,omitempty"`
	// Password for PLAIN and SCRAM.
	// +optional
	Password *SecretKeyRef `json:"password,omitempty"`
	// Token is Pulsar's token authentication: the key holds the JWT.
	// +optional
	Token *SecretKeyRef `json:"token,omitempty"`
	// OAuth2 is the client-credentials grant: Kafka's OAUTHBEARER and
	// Pulsar's OAuth2.
	// +optional
	OAuth2 *OAuth2ClientCredentials `json:"oauth2,omitempty"`
	// StrimziKafkaUser names the Secret Strimzi's User Operator wrote for
	// a KafkaUser (kafka only).
	// +optional
	StrimziKafkaUser *StrimziKafkaUserRef `json:"strimziKafkaUser,omitempty"`
}

// OAuth2ClientCredentials is an OAuth 2.0 client-credentials grant.
type OAuth2ClientCredentials struct {
	// TokenEndpoint is the token endpoint (Kafka's
	// sasl.oauthbearer.token.endpoint.url); kafka needs it. Pulsar's
	// clients (Java and Go alike) find theirs in issuerURL's metadata and
	// do not take it.
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	TokenEndpoint string `json:"tokenEndpoint,omitempty"`
	// IssuerURL is the issuer (Pulsar's issuerUrl), whose
	// /.well-known/openid-configuration names the token endpoint; pulsar
	// needs it.
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	IssuerURL string `json:"issuerURL,omitempty"`
	// ClientID of the client (not a secret).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ClientID string `json:"clientID"`
	// ClientSecret of the client.
	ClientSecret SecretKeyRef `json:"clientSecret"`
	// Scope asked for, space-separated; empty asks for none.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Scope string `json:"scope,omitempty"`
	// Audience asked for (Pulsar's audience); empty asks for none.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Audience string `json:"audience,omitempty"`
}

// StrimziKafkaUserRef names a KafkaUser's Secret as Strimzi writes it:
// scram-sha-512 users have the key password; tls users have user.crt and
// user.key (mutual TLS: spec.cluster.existing.tls is then required, and
// its clientCertificate must not be set).
type StrimziKafkaUserRef struct {
	// SecretName is the Secret the User Operator wrote: the KafkaUser's
	// name (with the User Operator's secretPrefix, if it has one).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
	// Type is the KafkaUser's spec.authentication.type.
	Type KafkaUserAuthType `json:"type"`
	// Username is the Kafka user name; empty means secretName (right
	// unless the User Operator has a secretPrefix).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Username string `json:"username,omitempty"`
}

// SecurityInfo is the security configuration a run's clients used, for the
// results, the report and compare (no secret values).
type SecurityInfo struct {
	// Protocol is Kafka's security.protocol (PLAINTEXT, SSL,
	// SASL_PLAINTEXT, SASL_SSL) or Pulsar's scheme (pulsar, pulsar+ssl).
	Protocol string `json:"protocol"`
	// Mechanism is the SASL mechanism or Pulsar authentication plugin,
	// "TLS" for a client certificate alone, empty for none.
	// +optional
	Mechanism string `json:"mechanism,omitempty"`
	// TLSVersion is the negotiated version, e.g. TLS 1.3, as a worker's
	// connection saw it; empty without TLS.
	// +optional
	TLSVersion string `json:"tlsVersion,omitempty"`
	// ClientCertificate is true when the clients presented a certificate
	// (mutual TLS).
	// +optional
	ClientCertificate bool `json:"clientCertificate,omitempty"`
	// Verification is how the brokers' certificates were checked: full,
	// no-hostname or none (insecureSkipVerify).
	// +optional
	Verification string `json:"verification,omitempty"`
}

// ManagedAuthentication is how the clients of managed brokers authenticate.
// +kubebuilder:validation:Enum=scram-sha-512;tls;token
type ManagedAuthentication string

const (
	// ManagedAuthScramSHA512 is a Strimzi KafkaUser of type scram-sha-512
	// on a listener with scram-sha-512 authentication (kafka).
	ManagedAuthScramSHA512 ManagedAuthentication = "scram-sha-512"
	// ManagedAuthTLS is a Strimzi KafkaUser of type tls on a listener with
	// tls authentication: mutual TLS (kafka).
	ManagedAuthTLS ManagedAuthentication = "tls"
	// ManagedAuthToken is the Pulsar chart's JWT token authentication,
	// with a signing key and a client token the run makes (pulsar).
	ManagedAuthToken ManagedAuthentication = "token"
)

// ManagedSecurity secures the client listener of brokers deployed for a run.
// The run makes everything it needs (Strimzi's cluster CA and a KafkaUser;
// for Pulsar a CA, the brokers' certificates, a signing key and a token) and
// its clients use it like an existing cluster's, from Secrets mounted into
// the coordinator and the workers.
// +kubebuilder:validation:XValidation:rule="!has(self.authentication) || self.authentication != 'tls' || (has(self.tls) && self.tls)",message="authentication tls is mutual TLS: set tls: true beside it"
type ManagedSecurity struct {
	// TLS encrypts the clients' connections: Strimzi's listener with tls
	// (its cluster CA), or the Pulsar chart's TLS for brokers (and the
	// proxy off) with certificates of a CA the run makes.
	// +optional
	TLS bool `json:"tls,omitempty"`
	// Authentication of the clients: scram-sha-512 or tls (kafka, a
	// KafkaUser the run creates), token (pulsar).
	// +optional
	Authentication ManagedAuthentication `json:"authentication,omitempty"`
}
