package rpc

import (
	"context"
	"io"
	"log"
	"sync"

	"google.golang.org/grpc/credentials"
)

// ServerAuth names what secures a server: TLS files (ServerTLS), or
// plaintext on a loopback address (Insecure); and how clients
// authenticate: tokens (a TokenDir of client-I.token files, ReadTokenDir)
// or certificates signed by ClientCA (mutual TLS). Its errors are
// ConfigErrors; those of settings it can name are FieldErrors of its fields.
type ServerAuth struct {
	Insecure                              bool
	CertFile, KeyFile, ClientCA, TokenDir string
}

// Credentials are the transport of a server listening on listen; a server
// nobody could authenticate to is refused.
func (a ServerAuth) Credentials(listen string) (credentials.TransportCredentials, error) {
	var creds credentials.TransportCredentials
	var err error
	switch {
	case a.Insecure && (a.CertFile != "" || a.KeyFile != "" || a.ClientCA != ""):
		return nil, fieldErrorf([]string{"Insecure", "CertFile", "KeyFile", "ClientCA"},
			"%s and %s/%s/%s exclude each other")
	case a.Insecure:
		creds, err = insecureFor(listen)
	case a.CertFile == "" || a.KeyFile == "":
		return nil, fieldErrorf([]string{"CertFile", "KeyFile", "Insecure"}, needCertAndKey)
	default:
		creds, err = ServerTLS(a.CertFile, a.KeyFile, a.ClientCA)
	}
	if err != nil {
		return nil, &ConfigError{err}
	}
	if a.TokenDir == "" && !a.Insecure && a.ClientCA == "" {
		return nil, fieldErrorf([]string{"TokenDir", "ClientCA"}, "%s DIR or %s FILE is required "+
			"(pacpfl certs writes client tokens and certificates)")
	}
	return creds, nil
}

// Tokens are the n clients' tokens of TokenDir (nil without one), for
// ServerConfig.Tokens.
func (a ServerAuth) Tokens(n int) ([][]byte, error) {
	if a.TokenDir == "" {
		return nil, nil
	}
	toks, err := ReadTokenDir(a.TokenDir, n)
	if err != nil {
		return nil, fieldErrorf([]string{"TokenDir"}, "%s: %v", err)
	}
	return toks, nil
}

// ClientAuth names what secures a client's connection: the CA that signed
// the server's certificate (ClientTLS), or plaintext to a loopback address
// (Insecure); and how it authenticates: its token file (ReadTokenFile) or
// its own certificate and key (mutual TLS). Its errors are ConfigErrors;
// those of settings it can name are FieldErrors of its fields.
type ClientAuth struct {
	Insecure                             bool
	CAFile, CertFile, KeyFile, TokenFile string
}

// Credentials are the transport to server and the client's token (nil:
// none; the certificate authenticates, or nothing does on loopback).
func (a ClientAuth) Credentials(server string) (credentials.TransportCredentials, []byte, error) {
	var creds credentials.TransportCredentials
	var err error
	if a.Insecure {
		if a.CertFile != "" || a.KeyFile != "" {
			return nil, nil, fieldErrorf([]string{"Insecure", "CertFile", "KeyFile"}, "%s and %s/%s exclude each other")
		}
		creds, err = insecureFor(server)
	} else {
		creds, err = a.tls(server)
	}
	if err != nil {
		return nil, nil, &ConfigError{err}
	}
	var token []byte
	switch {
	case a.TokenFile != "":
		if token, err = ReadTokenFile(a.TokenFile); err != nil {
			return nil, nil, fieldErrorf([]string{"TokenFile"}, "%s: %v", err)
		}
	case !a.Insecure && a.CertFile == "":
		return nil, nil, fieldErrorf([]string{"TokenFile", "CertFile", "KeyFile"}, "%s or %s/%s is required "+
			"(pacpfl certs writes client tokens and certificates)")
	}
	return creds, token, nil
}

// tls is ClientTLS of a's files, its refusals FieldErrors of a's fields.
func (a ClientAuth) tls(server string) (credentials.TransportCredentials, error) {
	switch {
	case (a.CertFile == "") != (a.KeyFile == ""):
		return nil, fieldErrorf([]string{"CertFile", "KeyFile"}, "a client certificate needs both %s and %s")
	case a.CAFile == "":
		return nil, fieldErrorf([]string{"CAFile", "Insecure"},
			"TLS needs %s (the CA certificate that signed the server's), or %s on a loopback address")
	}
	pool, err := readPool(a.CAFile)
	if err != nil {
		return nil, fieldErrorf([]string{"CAFile"}, "%s: %v", err)
	}
	return clientTLS(pool, server, a.CertFile, a.KeyFile)
}

// ParticipateOptions configure one client process (Participate).
type ParticipateOptions struct {
	Server string // the server's host:port
	Auth   ClientAuth
	// Client is the client: its id, model and data (GPClient, BNNClient,
	// CSVClient), how long it retries (GiveUp), its log. Its Token is set
	// from Auth.
	Client ClientConfig
	// Source, if set, names the client's data in the log ("of FILE").
	Source string
}

// Participate runs one client against the server until the federation is
// over (nil), the server refuses it, it gives up, or ctx is done (ctx's
// error): Serve over a connection secured as o.Auth says. Unusable
// settings are ConfigErrors, returned before connecting.
func Participate(ctx context.Context, o ParticipateOptions) error {
	creds, token, err := o.Auth.Credentials(o.Server)
	if err != nil {
		return err
	}
	conn, err := Dial(o.Server, creds)
	if err != nil {
		return &ConfigError{err}
	}
	defer conn.Close()
	cfg := o.Client
	cfg.Token = token
	src := ""
	if o.Source != "" {
		src = " of " + o.Source
	}
	cfg.logf("client %d (%d training samples%s) connecting to %s", cfg.ID, cfg.DataSize, src, o.Server)
	return Serve(ctx, conn, cfg)
}

// NewLog returns a log function writing timestamped lines, each starting
// with prefix, to w (for ServerConfig.Log and ClientConfig.Log).
func NewLog(w io.Writer, prefix string) func(format string, a ...any) {
	l := log.New(w, prefix, log.LstdFlags|log.Lmicroseconds)
	return func(format string, a ...any) { l.Printf(format, a...) }
}

// SyncWriter returns a writer that serialises the writes to w: one stream
// shared by a server's log, whose lines come from its sessions'
// goroutines, and its progress output.
func SyncWriter(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
