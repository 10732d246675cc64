package rpc

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Loopback is a server and its clients in one process over TCP on
// 127.0.0.1 (pacpfl bench rpc, tests): the real transport, TLS optional.
type Loopback struct {
	Co   *Coordinator
	Addr string
	srv  *grpc.Server
	wg   sync.WaitGroup
	errs []error
}

// NewLoopback starts a coordinator for cfg on 127.0.0.1 and one Serve per
// client configuration, with fresh test certificates when useTLS, and waits
// until every client has joined.
func NewLoopback(cfg ServerConfig, clients []ClientConfig, useTLS bool) (*Loopback, error) {
	co, err := NewCoordinator(cfg)
	if err != nil {
		return nil, err
	}
	var sc, cc credentials.TransportCredentials = insecure.NewCredentials(), insecure.NewCredentials()
	if useTLS {
		c, err := GenerateCerts([]string{"127.0.0.1"}, time.Hour, 0)
		if err != nil {
			return nil, err
		}
		if sc, cc, err = TLSFromCerts(c, "127.0.0.1"); err != nil {
			return nil, err
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Loopback{Co: co, Addr: lis.Addr().String(), srv: co.NewServer(sc)}
	RegisterService(l.srv, co)
	go l.srv.Serve(co.Listener(lis))
	l.errs = make([]error, len(clients))
	for i := range clients {
		conn, err := Dial(l.Addr, cc)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer conn.Close()
			l.errs[i] = Serve(context.Background(), conn, clients[i])
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := co.WaitReady(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close ends the session of every client, waits for them and stops the
// server; it returns the clients' errors.
func (l *Loopback) Close() []error {
	l.Co.Finish()
	l.wg.Wait()
	l.srv.Stop()
	return l.errs
}
