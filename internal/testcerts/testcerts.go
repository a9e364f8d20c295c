// Package testcerts makes the certificates of the security tests: a CA, a
// broker certificate for the names the brokers are reached by, client
// certificates for mutual TLS, and the broken ones (another CA, a wrong
// name, an expired certificate) whose errors the tests check. PEM files,
// as Kafka (ssl.*.type=PEM), Pulsar and the drivers read them.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority that signs leaves.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertFile is the CA's PEM certificate.
	CertFile string
	dir      string
}

// Pair is a PEM certificate and its PEM (PKCS#8) private key.
type Pair struct {
	CertFile, KeyFile string
	// CertPEM and KeyPEM are the same bytes as the files.
	CertPEM, KeyPEM []byte
}

// NewCA makes a CA named cn and writes its certificate to dir/<cn>-ca.crt.
func NewCA(dir, cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{Cert: cert, Key: key, dir: dir, CertFile: filepath.Join(dir, cn+"-ca.crt")}
	return ca, os.WriteFile(ca.CertFile, pemBlock("CERTIFICATE", der), 0o600)
}

// Options of a leaf certificate.
type Options struct {
	// Names are DNS names or IP addresses the certificate is for.
	Names []string
	// Client makes a client certificate (extended key usage clientAuth);
	// otherwise a server one.
	Client bool
	// Expired makes a certificate whose validity ended an hour ago.
	Expired bool
}

// Issue signs a leaf named cn and writes dir/<cn>.crt and dir/<cn>.key.
func (ca *CA) Issue(cn string, o Options) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if o.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if o.Expired {
		tmpl.NotBefore = time.Now().Add(-48 * time.Hour)
		tmpl.NotAfter = time.Now().Add(-time.Hour)
	}
	for _, n := range o.Names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return Pair{}, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{
		CertFile: filepath.Join(ca.dir, cn+".crt"), KeyFile: filepath.Join(ca.dir, cn+".key"),
		CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", pk),
	}
	if err := os.WriteFile(p.CertFile, p.CertPEM, 0o600); err != nil {
		return Pair{}, err
	}
	if err := os.WriteFile(p.KeyFile, p.KeyPEM, 0o600); err != nil {
		return Pair{}, fmt.Errorf("writing %s: %w", p.KeyFile, err)
	}
	return p, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}
