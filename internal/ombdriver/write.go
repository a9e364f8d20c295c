package ombdriver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	// Go's standard library reads no Java key store. JKS and PKCS12
	// trust and key stores are what Java clients' driver files name, so
	// they are read here, on the machine the file was written for, and
	// turned into PEM in a private directory. These two modules are the
	// pair cert-manager writes Java stores with: keystore-go reads JKS
	// (including the JDK's key-entry protection), go-pkcs12 reads PKCS12
	// as the JDK writes it since JDK 12 (PBES2/AES, HMAC-SHA-256) and its
	// trust-anchor attribute. Converting with the JDK's keytool instead
	// would need Java where local mode runs, which an existing-cluster run
	// does not otherwise need. Pinned in go.mod.
	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/streambench/streambench-operator/internal/driver"
)

// Write reads the secret material s names (inline values, and the
// stores and files of this machine), writes each piece into dir as a
// file only its owner reads (0600; dir should be a private directory,
// 0700), and returns the driver's settings with those paths. JKS and
// PKCS12 stores become PEM. A file that is missing, unreadable or not
// what its key says is an error naming the key and the fix, before any
// connection is tried; no value is ever in an error.
func (s *Security) Write(dir string) (*driver.Security, error) {
	if s == nil {
		return nil, nil
	}
	w := writer{dir: dir}
	out := &driver.Security{Mechanism: s.Mechanism, Username: s.Username}
	if t := s.TLS; t != nil {
		f := &driver.TLSFiles{SkipHostnameVerification: t.SkipHostnameVerification, InsecureSkipVerify: t.InsecureSkipVerify}
		if t.Trust != nil {
			pem, err := trustPEM(t.Trust)
			if err != nil {
				return nil, err
			}
			if f.CAFile, err = w.write("ca.pem", pem); err != nil {
				return nil, err
			}
		}
		if t.Client != nil {
			cert, key, err := clientPEM(t.Client)
			if err != nil {
				return nil, err
			}
			if f.CertFile, err = w.write("client.crt", cert); err != nil {
				return nil, err
			}
			if f.KeyFile, err = w.write("client.key", key); err != nil {
				return nil, err
			}
		}
		out.TLS = f
	}
	var err error
	if s.Password.Set() {
		if out.PasswordFile, err = w.secret("password", s.Password); err != nil {
			return nil, err
		}
	}
	if s.Token.Set() {
		if out.TokenFile, err = w.secret("token", s.Token); err != nil {
			return nil, err
		}
	}
	if o := s.OAuth2; o != nil {
		of := &driver.OAuth2Files{TokenEndpoint: o.TokenEndpoint, IssuerURL: o.IssuerURL, ClientID: o.ClientID, Scope: o.Scope, Audience: o.Audience}
		secret := o.ClientSecret
		if o.KeyFile.Set() {
			id, sec, err := oauthKeyFile(o.KeyFile)
			if err != nil {
				return nil, err
			}
			of.ClientID, secret = id, sec
		}
		if of.ClientSecretFile, err = w.secret("client-secret", secret); err != nil {
			return nil, err
		}
		out.OAuth2 = of
	}
	return out, nil
}

type writer struct{ dir string }

func (w writer) write(name string, data []byte) (string, error) {
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return p, nil
}

func (w writer) secret(name string, s Secret) (string, error) {
	v, err := s.read()
	if err != nil {
		return "", err
	}
	return w.write(name, []byte(v))
}

// read is the secret's value: inline, or its file's content without the
// line end an editor adds (the Java clients trim a token file too).
func (s Secret) read() (string, error) {
	if s.Path == "" {
		return s.value, nil
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %w; give a file of this machine", s.From, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s: %s is empty", s.From, s.Path)
	}
	return v, nil
}

func (s Secret) bytes() ([]byte, error) {
	if s.Path == "" {
		return []byte(s.value), nil
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; give a file of this machine", s.From, err)
	}
	return b, nil
}

// storeFormat is what a store's bytes are, whatever its type says: the
// JDK since 9 reads a JKS store declared PKCS12 and the other way round
// (keystore.type.compat), so the declared JKS/PKCS12 is not held against
// the file; PEM is.
type storeFormat int

const (
	formatUnknown storeFormat = iota
	formatPEM
	formatJKS
	formatJCEKS
	formatPKCS12
)

func sniff(b []byte) storeFormat {
	switch {
	case len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xFEEDFEED:
		return formatJKS
	case len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xCECECECE:
		return formatJCEKS
	case bytes.Contains(b, []byte("-----BEGIN ")):
		return formatPEM
	case len(b) > 0 && b[0] == 0x30: // an ASN.1 SEQUENCE: PKCS12's PFX
		return formatPKCS12
	}
	return formatUnknown
}

func (st *Store) load() ([]byte, storeFormat, error) {
	if st.Path == "" {
		b, err := st.PEM.bytes()
		return b, formatPEM, err
	}
	b, err := os.ReadFile(st.Path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w; give a file of this machine", st.Key, err)
	}
	f := sniff(b)
	switch {
	case f == formatJCEKS:
		return nil, 0, fmt.Errorf("%s: %s is a JCEKS store, which streambench does not read; convert it: keytool -importkeystore -srckeystore %s -srcstoretype JCEKS -destkeystore store.p12 -deststoretype PKCS12", st.Key, st.Path, st.Path)
	case f == formatUnknown:
		return nil, 0, fmt.Errorf("%s: %s is neither PEM, JKS nor PKCS12", st.Key, st.Path)
	case (f == formatPEM) != (st.Type == "PEM"):
		want := "PEM"
		if f != formatPEM {
			want = "JKS or PKCS12"
		}
		return nil, 0, fmt.Errorf("%s: %s is a %s file but its type is %s; set the store's type to %s", st.Key, st.Path, map[storeFormat]string{formatPEM: "PEM", formatJKS: "JKS", formatPKCS12: "PKCS12"}[f], orJKS(st.Type), want)
	}
	return b, f, nil
}

func orJKS(t string) string {
	if t == "" {
		return "JKS"
	}
	return t
}

// trustPEM is the trust store's certificates as a PEM bundle.
func trustPEM(st *Store) ([]byte, error) {
	b, f, err := st.load()
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	where := st.Key
	if st.Path != "" {
		where += " (" + st.Path + ")"
	}
	switch f {
	case formatPEM:
		certs, err = pemCertificates(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
	case formatJKS:
		ks, err := loadJKS(b, st, where)
		if err != nil {
			return nil, err
		}
		for _, a := range ks.Aliases() {
			if e, err := ks.GetTrustedCertificateEntry(a); err == nil {
				c, err := x509.ParseCertificate(e.Certificate.Content)
				if err != nil {
					return nil, fmt.Errorf("%s: the certificate %q cannot be read: %v", where, a, err)
				}
				certs = append(certs, c)
			}
		}
	case formatPKCS12:
		pw, err := storePassword(st)
		if err != nil {
			return nil, err
		}
		certs, err = pkcs12.DecodeTrustStore(b, pw)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", where, explainPKCS12(err, st, true))
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s holds no trusted certificate; import the brokers' CA: keytool -importcert -alias ca -file ca.crt -keystore truststore", where)
	}
	var out bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return out.Bytes(), nil
}

func pemCertificates(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a certificate cannot be read: %v", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	return certs, nil
}

func storePassword(st *Store) (string, error) {
	if !st.Password.Set() {
		return "", nil
	}
	return st.Password.read()
}

func loadJKS(b []byte, st *Store, where string) (keystore.KeyStore, error) {
	pw, err := storePassword(st)
	if err != nil {
		return keystore.KeyStore{}, err
	}
	if pw == "" {
		// The JDK then skips the store's integrity check; keystore-go
		// cannot.
		return keystore.KeyStore{}, fmt.Errorf("%s: a JKS store needs its password (the store's integrity is checked with it); set the store's password key", where)
	}
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(b), []byte(pw)); err != nil {
		if strings.Contains(err.Error(), "digest") {
			return ks, fmt.Errorf("%s: the password (%s) is wrong: the store's integrity check failed", where, st.Password.From)
		}
		return ks, fmt.Errorf("%s: not a readable JKS store: %v", where, err)
	}
	return ks, nil
}

func explainPKCS12(err error, st *Store, trust bool) string {
	msg := err.Error()
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword) || strings.Contains(msg, "password"):
		if st.Password.Set() {
			return fmt.Sprintf("the password (%s) is wrong", st.Password.From)
		}
		return "the store has a password: set the store's password key"
	case trust && strings.Contains(msg, "not marked as trusted"):
		return "holds a certificate not marked as a trust anchor (a PKCS12 file made by openssl, not keytool); give the CA as PEM (type PEM) or import it with keytool -importcert"
	case trust && (strings.Contains(msg, "expected only certificate bags") || strings.Contains(msg, "items in the authenticated safe")):
		return "is a key store (it holds a private key), not a trust store; give the CAs to trust"
	}
	return "not a readable PKCS12 store: " + msg
}

// clientPEM is the client's certificate chain and private key in PEM.
func clientPEM(st *Store) (certPEM, keyPEM []byte, err error) {
	b, f, err := st.load()
	if err != nil {
		return nil, nil, err
	}
	where := st.Key
	if st.Path != "" {
		where += " (" + st.Path + ")"
	}
	var chain [][]byte
	var keyDER []byte
	switch f {
	case formatPEM:
		keySrc := b
		if st.KeyPEM.Set() {
			if keySrc, err = st.KeyPEM.bytes(); err != nil {
				return nil, nil, err
			}
		}
		certs, err := pemCertificates(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", where, err)
		}
		for _, c := range certs {
			chain = append(chain, c.Raw)
		}
		keyFrom := where
		if st.KeyPEM.Set() {
			keyFrom = st.KeyPEM.From
		}
		if keyDER, err = pemKey(keySrc, keyFrom); err != nil {
			return nil, nil, err
		}
	case formatJKS:
		ks, err := loadJKS(b, st, where)
		if err != nil {
			return nil, nil, err
		}
		var aliases []string
		for _, a := range ks.Aliases() {
			if ks.IsPrivateKeyEntry(a) {
				aliases = append(aliases, a)
			}
		}
		if len(aliases) != 1 {
			return nil, nil, fmt.Errorf("%s holds %d private keys (%s); streambench needs exactly one, the client's", where, len(aliases), strings.Join(aliases, ", "))
		}
		pw := st.Password
		if st.KeyPassword.Set() {
			pw = st.KeyPassword
		}
		kp, err := pw.read()
		if err != nil {
			return nil, nil, err
		}
		e, err := ks.GetPrivateKeyEntry(aliases[0], []byte(kp))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: the private key %q cannot be opened with %s: set ssl.key.password to the key's password", where, aliases[0], pw.From)
		}
		keyDER = e.PrivateKey
		for _, c := range e.CertificateChain {
			chain = append(chain, c.Content)
		}
	case formatPKCS12:
		pw, err := storePassword(st)
		if err != nil {
			return nil, nil, err
		}
		key, leaf, cas, err := pkcs12.DecodeChain(b, pw)
		if err != nil && st.KeyPassword.Set() {
			// The JDK's stores have one password; a key password that
			// differs is tried as the store's.
			if kp, kerr := st.KeyPassword.read(); kerr == nil && kp != pw {
				key, leaf, cas, err = pkcs12.DecodeChain(b, kp)
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s", where, explainPKCS12(err, st, false))
		}
		if keyDER, err = x509.MarshalPKCS8PrivateKey(key); err != nil {
			return nil, nil, fmt.Errorf("%s: the private key: %v", where, err)
		}
		chain = append(chain, leaf.Raw)
		for _, c := range cas {
			chain = append(chain, c.Raw)
		}
	}
	var cb, kb bytes.Buffer
	for _, c := range chain {
		_ = pem.Encode(&cb, &pem.Block{Type: "CERTIFICATE", Bytes: c})
	}
	_ = pem.Encode(&kb, &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if _, err := tls.X509KeyPair(cb.Bytes(), kb.Bytes()); err != nil {
		return nil, nil, fmt.Errorf("%s: the client certificate and its private key do not make a pair: %v", where, err)
	}
	return cb.Bytes(), kb.Bytes(), nil
}

// pemKey is the first private key of b as PKCS#8 DER.
func pemKey(b []byte, from string) ([]byte, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%s holds no PEM private key (-----BEGIN PRIVATE KEY-----)", from)
		}
		if !strings.HasSuffix(blk.Type, "PRIVATE KEY") {
			continue
		}
		//lint:ignore SA1019 only asks whether the key is encrypted
		if blk.Type == "ENCRYPTED PRIVATE KEY" || x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck
			return nil, fmt.Errorf("%s: the private key is encrypted, which streambench's clients do not read; decrypt it into a private file (openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-plain.pem) or give a PKCS12 key store", from)
		}
		var key any
		var err error
		switch blk.Type {
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(blk.Bytes)
		default:
			key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the private key cannot be read: %v", from, err)
		}
		return x509.MarshalPKCS8PrivateKey(key)
	}
}

// oauthKeyFile reads Pulsar's OAuth2 credentials file (privateKey):
// file:// or data: URL of a JSON object with client_id and client_secret.
func oauthKeyFile(s Secret) (id string, secret Secret, err error) {
	var b []byte
	if s.Path != "" {
		if b, err = s.bytes(); err != nil {
			return "", Secret{}, err
		}
	} else {
		// data:application/json;base64,<...> or data:application/json,<...>
		meta, data, ok := strings.Cut(strings.TrimPrefix(s.value, "data:"), ",")
		if !ok {
			return "", Secret{}, fmt.Errorf("%s: a data: URL needs a ',' before its data", s.From)
		}
		if strings.HasSuffix(meta, ";base64") {
			if b, err = base64.StdEncoding.DecodeString(data); err != nil {
				return "", Secret{}, fmt.Errorf("%s: the data: URL is not valid base64", s.From)
			}
		} else {
			d, err := url.PathUnescape(data)
			if err != nil {
				return "", Secret{}, fmt.Errorf("%s: the data: URL cannot be read", s.From)
			}
			b = []byte(d)
		}
	}
	var kf struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(b, &kf); err != nil {
		return "", Secret{}, fmt.Errorf("%s: the credentials are not a JSON object with client_id and client_secret", s.From)
	}
	var missing []string
	if kf.ClientID == "" {
		missing = append(missing, "client_id")
	}
	if kf.ClientSecret == "" {
		missing = append(missing, "client_secret")
	}
	if len(missing) > 0 {
		return "", Secret{}, fmt.Errorf("%s: the credentials lack %s", s.From, strings.Join(slices.Clip(missing), " and "))
	}
	return kf.ClientID, inline(s.From, kf.ClientSecret), nil
}
