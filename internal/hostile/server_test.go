package hostile

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// The tests' own gRPC servers: rpc/pb's generated service with a handler
// of the test's (not package rpc).

type handlerFunc func(st pb.Federation_SessionServer) error

type fedServer struct {
	pb.UnimplementedFederationServer
	h handlerFunc
}

func (f fedServer) Session(st pb.Federation_SessionServer) error { return f.h(st) }

// testCerts returns a server TLS configuration for 127.0.0.1 and a client
// configuration trusting it.
func testCerts(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hostile test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature |
			x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion: tls.VersionTLS13}
	client = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}
	return server, client
}

// startServer serves h on 127.0.0.1 (TLS if tlsConf is set) until the test
// ends; it returns the address and the server (to stop it early).
func startServer(t *testing.T, h handlerFunc, tlsConf *tls.Config, opts ...grpc.ServerOption) (string, *grpc.Server) {
	t.Helper()
	return startService(t, fedServer{h: h}, tlsConf, opts...)
}

func startService(t *testing.T, svc pb.FederationServer, tlsConf *tls.Config,
	opts ...grpc.ServerOption) (string, *grpc.Server) {
	t.Helper()
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	srv := grpc.NewServer(opts...)
	pb.RegisterFederationServer(srv, svc)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), srv
}
