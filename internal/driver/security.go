package driver

// Security is how a driver's clients reach a secured cluster. It carries the
// paths of files that hold the secret material (Secret keys mounted into the
// pod, or files of the local machine), never the values: a Config travels
// from the coordinator to every worker as JSON and may be logged.
type Security struct {
	// TLS, when set, encrypts every connection (Kafka SSL or SASL_SSL,
	// Pulsar pulsar+ssl:// and https://).
	TLS *TLSFiles `json:"tls,omitempty"`
	// Mechanism is the SASL mechanism (PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512, OAUTHBEARER) or Pulsar's authentication (Token,
	// OAuth2); empty means none beyond a TLS client certificate.
	Mechanism string `json:"mechanism,omitempty"`
	// Username for PLAIN and SCRAM.
	Username string `json:"username,omitempty"`
	// PasswordFile holds the password of PLAIN and SCRAM.
	PasswordFile string `json:"passwordFile,omitempty"`
	// TokenFile holds Pulsar's token (a JWT).
	TokenFile string `json:"tokenFile,omitempty"`
	// OAuth2 is the client-credentials grant of OAUTHBEARER and OAuth2.
	OAuth2 *OAuth2Files `json:"oauth2,omitempty"`
}

// TLSFiles are the TLS settings, with PEM files.
type TLSFiles struct {
	// CAFile is a PEM bundle of the CAs to trust; empty means the system's.
	CAFile string `json:"caFile,omitempty"`
	// ServerName is checked against the brokers' certificates; empty means
	// the host of each address.
	ServerName string `json:"serverName,omitempty"`
	// CertFile and KeyFile are the client's PEM certificate and key, for
	// mutual TLS; both or neither.
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	// SkipHostnameVerification checks the chain but not the name.
	SkipHostnameVerification bool `json:"skipHostnameVerification,omitempty"`
	// InsecureSkipVerify accepts any certificate.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// OAuth2Files is an OAuth 2.0 client-credentials grant.
type OAuth2Files struct {
	TokenEndpoint    string `json:"tokenEndpoint,omitempty"`
	IssuerURL        string `json:"issuerURL,omitempty"`
	ClientID         string `json:"clientID"`
	ClientSecretFile string `json:"clientSecretFile"`
	Scope            string `json:"scope,omitempty"`
	Audience         string `json:"audience,omitempty"`
}
