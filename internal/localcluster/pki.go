package localcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writePKI writes, once, the cluster's CA, the API server's serving
// certificate, the service-account signing pair and one admin token (group
// system:masters) that kubectl and every component use. Certificates stay
// across down and up, as the images and binaries do.
func (c *Cluster) writePKI() error {
	dir := c.PKI()
	if _, err := os.Stat(filepath.Join(dir, "ca.crt")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	Logf("writing certificates and keys into %s", dir)
	now := time.Now()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "streambench-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	srvKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	dns, ips := c.APIServerSANs()
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
	}
	for _, ip := range ips {
		srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, net.ParseIP(ip))
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ca.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(caKey)), 0o600},
		{"apiserver.crt", pemBlock("CERTIFICATE", srvDER), 0o644},
		{"apiserver.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(srvKey)), 0o600},
		{"sa.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)), 0o600},
		{"sa.pub", pemBlock("PUBLIC KEY", saPub), 0o644},
		{"tokens.csv", []byte(hex.EncodeToString(token) + ",streambench-admin,streambench-admin,system:masters\n"), 0o600},
		// The CA certificate last: its presence says the rest is there.
		{"ca.crt", pemBlock("CERTIFICATE", caDER), 0o644},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// adminToken is the token of tokens.csv's one line.
func (c *Cluster) adminToken() (string, error) {
	b, err := os.ReadFile(filepath.Join(c.PKI(), "tokens.csv"))
	if err != nil {
		return "", err
	}
	tok, _, ok := strings.Cut(string(b), ",")
	if !ok || tok == "" {
		return "", fmt.Errorf("%s has no token", filepath.Join(c.PKI(), "tokens.csv"))
	}
	return tok, nil
}
