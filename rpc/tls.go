package rpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
)

// IsLoopback reports whether the host of addr (host:port) is a loopback
// address or "localhost". An empty host (all interfaces) is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Insecure returns plaintext credentials for addr, refused unless addr is a
// loopback address: tokens and particles must not cross a network in clear.
func Insecure(addr string) (credentials.TransportCredentials, error) {
	if !IsLoopback(addr) {
		return nil, fmt.Errorf("plaintext refused for %s: only on a loopback address (127.0.0.1, ::1, localhost); "+
			"use TLS", addr)
	}
	return insecure.NewCredentials(), nil
}

// insecureFor is Insecure for the Insecure field of ServerAuth and
// ClientAuth: its refusal is a FieldError of that field.
func insecureFor(addr string) (credentials.TransportCredentials, error) {
	if !IsLoopback(addr) {
		return nil, fieldErrorf([]string{"Insecure"}, "%s refused for %s: plaintext only on a loopback address "+
			"(127.0.0.1, ::1, localhost); use TLS", addr)
	}
	return Insecure(addr)
}

// needCertAndKey is the refusal of a TLS server without its certificate
// or key, naming the certificate, key and insecure settings.
const needCertAndKey = "TLS needs %s and %s (or %s on a loopback address)"

// ServerTLS loads the server's certificate and key (PEM), TLS 1.3 only.
// With clientCA set, every client must present a certificate signed by that
// CA (mutual TLS); ClientCertID then names its client id.
func ServerTLS(certFile, keyFile, clientCA string) (credentials.TransportCredentials, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf(needCertAndKey, "a certificate", "a key", "plaintext")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	if clientCA != "" {
		pool, err := readPool(clientCA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return credentials.NewTLS(cfg), nil
}

func readPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", file)
	}
	return pool, nil
}

// ClientTLS trusts the CA certificate(s) in caFile (PEM) for the server at
// addr, TLS 1.3 only; with certFile and keyFile the client presents its own
// certificate (mutual TLS).
func ClientTLS(caFile, addr, certFile, keyFile string) (credentials.TransportCredentials, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both a certificate and a key file")
	}
	if caFile == "" {
		return nil, errors.New("TLS needs the CA certificate that signed the server's, or plaintext on a loopback " +
			"address")
	}
	pool, err := readPool(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	return clientTLS(pool, addr, certFile, keyFile)
}

// clientTLS is ClientTLS with the CA's pool read.
func clientTLS(pool *x509.CertPool, addr, certFile, keyFile string) (credentials.TransportCredentials, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("server address %q: %w", addr, err)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// clientCN is the subject common name of client i's certificate.
func clientCN(i int) string { return fmt.Sprintf("pacpfl-client-%d", i) }

// ClientCertID returns the client id named by the verified client
// certificate of ctx's connection, or ok = false without one.
func ClientCertID(ctx context.Context) (id int, ok bool) {
	p, found := peer.FromContext(ctx)
	if !found {
		return 0, false
	}
	ti, isTLS := p.AuthInfo.(credentials.TLSInfo)
	if !isTLS || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(ti.State.VerifiedChains[0][0].Subject.CommonName, "pacpfl-client-%d", &n); err != nil ||
		n < 0 {
		return 0, false
	}
	return n, true
}

// TLSFromCerts returns server and client credentials from c (the client's
// for serverName).
func TLSFromCerts(c *Certs, serverName string) (server, client credentials.TransportCredentials, err error) {
	cert, err := tls.X509KeyPair(c.ServerCert, c.ServerKey)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CA) {
		return nil, nil, errors.New("no CA certificate")
	}
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}),
		credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS13}), nil
}

// Certs are a test CA, a server certificate and client certificates
// signed by it, PEM encoded.
type Certs struct {
	CA, ServerCert, ServerKey []byte
	// ClientCert[i], ClientKey[i]: client i's certificate (common name
	// pacpfl-client-i, for mutual TLS) and key.
	ClientCert, ClientKey [][]byte
}

// GenerateCerts makes a fresh ECDSA P-256 CA, a server certificate for
// hosts (IP addresses or DNS names) and certificates for clients clients,
// valid for validFor. The CA's key is not returned: nothing else can be
// signed with it.
func GenerateCerts(hosts []string, validFor time.Duration, clients int) (*Certs, error) {
	if len(hosts) == 0 {
		return nil, errors.New("no hosts for the server certificate")
	}
	if validFor <= 0 {
		return nil, errors.New("non-positive certificate lifetime")
	}
	now := time.Now().Add(-time.Minute)
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
		return n
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "pacpfl test CA"},
		NotBefore: now, NotAfter: now.Add(validFor),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true,
		MaxPathLenZero: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now, NotAfter: now.Add(validFor),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, errors.New("empty host name")
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	out := &Certs{
		CA:         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		ServerCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ServerKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
	for i := 0; i < clients; i++ {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(), Subject: pkix.Name{CommonName: clientCN(i)},
			NotBefore: now, NotAfter: now.Add(validFor),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		out.ClientCert = append(out.ClientCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		out.ClientKey = append(out.ClientKey, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	}
	return out, nil
}
