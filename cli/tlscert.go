package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Self-signed certificate files inside the data dir.
const (
	certFile = "tls-cert.pem"
	keyFile  = "tls-key.pem"
)

// loadOrCreateCert returns the TLS certificate: certPath/keyPath when
// given, else DIR/tls-cert.pem and DIR/tls-key.pem, generated on first
// start as a self-signed ECDSA P-256 certificate for localhost, the host
// name and every local interface address, valid 10 years. created tells
// whether it was generated now.
func loadOrCreateCert(dir, certPath, keyPath string) (cert tls.Certificate, created bool, err error) {
	if (certPath == "") != (keyPath == "") {
		return cert, false, errors.New("--cert and --key go together")
	}
	if certPath == "" {
		certPath, keyPath = filepath.Join(dir, certFile), filepath.Join(dir, keyFile)
		if _, err := os.Stat(certPath); errors.Is(err, os.ErrNotExist) {
			if err := generateCert(certPath, keyPath); err != nil {
				return cert, false, err
			}
			created = true
		}
	}
	cert, err = tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return cert, false, fmt.Errorf("load certificate %s: %w", certPath, err)
	}
	return cert, created, nil
}

func generateCert(certPath, keyPath string) error {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("serial: %w", err)
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "VetLens " + host, Organization: []string{"VetLens"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host != "" && host != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ipn.IP)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return fmt.Errorf("create certificate: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		return fmt.Errorf("marshal key: %w", err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("write certificate: %w", err)
	}
	return nil
}

// Fingerprint is the SHA-256 of the leaf certificate's DER bytes, as
// colon-separated upper-case hex (what browsers show).
func Fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(cert.Certificate[0])
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// PublicKeyPin is the certificate's public key pin as curl's
// --pinnedpubkey takes it: "sha256//" and the base64 SHA-256 of the
// DER SubjectPublicKeyInfo. It stays the same when a certificate is
// renewed with the same key. Empty when the certificate cannot be read.
func PublicKeyPin(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return "sha256//" + base64.StdEncoding.EncodeToString(sum[:])
}
