package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/pacpfl/pacpfl/fl"
)

// FederateOptions configure a training run with remote clients (Federate).
type FederateOptions struct {
	// Listen is the host:port to listen on (port 0: any free port; the
	// log line "listening on ADDR" names it).
	Listen string
	// Creds secure the transport: ServerTLS (TLS 1.3, optionally mutual),
	// or Insecure on a loopback address.
	Creds credentials.TransportCredentials
	// Server configures the coordinator: the n clients, their tokens and
	// data hashes, limits, the log.
	Server ServerConfig
	// Train is the server configuration of the training run that train
	// (Federate's argument) will use; Federate sets its Resume, OnDrop,
	// AfterRound and, if 0, Workers (all of a round's clients at once:
	// they compute elsewhere). Progress is left to the caller.
	Train *fl.Config
	// Wait bounds the wait for every client to join (0: no bound).
	Wait time.Duration
	// Resume continues a run from a saved state (nil: from round 0).
	Resume *fl.State
	// Save, if set, stores the server's state every SaveEvery rounds, after
	// the last round and after the round under way when ctx is done
	// (SaveEvery 0: every 10 rounds).
	Save      func(*fl.State) error
	SaveEvery int
	// Grace is how long the round under way may take to finish once ctx
	// is done before the sessions are cut without a final Save (0: 10 s).
	Grace time.Duration
	// OnListen, if set, is called once the server listens, before any
	// client can have joined.
	OnListen func(addr net.Addr)
}

// Interrupted is Federate's error when its context ended the run between
// two rounds: Round rounds are done, and Saved tells whether the state
// after them was stored (Save).
type Interrupted struct {
	Round int
	Saved bool
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted after round %d", e.Round)
}

// ListenError is Federate's error when it cannot listen on its address (in
// use, not local, not an address).
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen on %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }

// Federate serves the federation on o.Listen and runs train with a function
// that waits for every client to join and returns them as fl.Clients (pass
// it as fl.PACPFLOptions.Clients, fl.BNNOptions.Clients, or call it and
// build an fl.Server). Training stops at the end of the round under way
// when ctx is done, with an *Interrupted error (the state saved first, when
// o.Save is set). After a successful run the clients are told the
// federation is over; after a failed or interrupted one they keep retrying,
// so that the run can be resumed.
func Federate(ctx context.Context, o FederateOptions,
	train func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error)) (*fl.MethodResult, error) {
	if o.Train == nil || train == nil {
		return nil, errors.New("rpc: no training configuration or run")
	}
	sv, err := serve(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer stopGRPC(sv.gs)
	co := sv.co
	cfg := o.Train
	cfg.Resume = o.Resume
	cfg.OnDrop = sv.onDrop
	cfg.AfterRound = func(s *fl.Server, round int) error {
		var save func() error
		if o.Save != nil {
			save = func() error {
				st, err := s.State()
				if err == nil {
					err = o.Save(st)
				}
				return err
			}
		}
		return sv.afterRound(ctx, round, cfg.Rounds, save)
	}
	if cfg.Workers == 0 {
		cfg.Workers = cfg.ClientsPerRound
		if cfg.Workers == 0 {
			cfg.Workers = min(o.Server.Clients, fl.DefaultClientsPerRound)
		}
	}
	clients := func() ([]fl.Client, error) {
		if err := sv.waitClients(ctx, &o); err != nil {
			return nil, err
		}
		return co.Clients(), nil
	}
	return sv.finish(train(clients))
}

// RoundsRun is a round-based peer method's run with remote clients
// (FederateRounds).
type RoundsRun struct {
	// Rounds is the method's number of rounds (its last one is saved).
	Rounds int
	// Resume, if set, is the state to continue from (its Clients restore
	// the server's record of the clients' accepted updates).
	Resume *fl.RoundState
	// Save, if set, stores the state every FederateOptions.SaveEvery
	// rounds, after the last round and after the round under way when ctx
	// is done.
	Save func(*fl.RoundState) error
	// Run trains the method with the remote clients (clients waits for
	// every client to join and returns them in id order), its rounds
	// resumed and saved through ck and its left-out updates told to
	// onDrop.
	Run func(clients func() ([]fl.RoundClient, error), ck fl.RoundCheckpoint,
		onDrop func(round, client int, err error)) (*fl.MethodResult, error)
}

// FederateRounds is Federate for a round-based peer method (FedAvg,
// FedProx, pFedBayes, FedVI): the remote clients are fl.RoundClients, the
// checkpoint an fl.RoundState. o.Train, o.Resume and o.Save are not used.
func FederateRounds(ctx context.Context, o FederateOptions, r RoundsRun) (*fl.MethodResult, error) {
	if r.Run == nil || r.Rounds < 0 {
		return nil, errors.New("rpc: no run or a negative number of rounds")
	}
	sv, err := serve(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer stopGRPC(sv.gs)
	if r.Resume != nil && r.Resume.Clients != nil {
		if err := sv.co.SetStateRounds(r.Resume.Clients); err != nil {
			return nil, err
		}
	}
	ck := fl.RoundCheckpoint{Resume: r.Resume, AfterRound: func(st *fl.RoundState) error {
		st.Clients = sv.co.StateRounds()
		var save func() error
		if r.Save != nil {
			save = func() error { return r.Save(st) }
		}
		return sv.afterRound(ctx, st.Round, r.Rounds, save)
	}}
	clients := func() ([]fl.RoundClient, error) {
		if err := sv.waitClients(ctx, &o); err != nil {
			return nil, err
		}
		return sv.co.RoundClients(), nil
	}
	return sv.finish(r.Run(clients, ck, sv.onDrop))
}

// served is a coordinator listening and serving (serve).
type served struct {
	co    *Coordinator
	gs    *grpc.Server
	logf  func(format string, a ...any)
	every int // save every this many rounds
	// stopped is the run's end after a signal (afterRound).
	stopped *Interrupted
}

// serve checks o's transport settings, starts the coordinator on
// o.Listen and cuts the round under way o.Grace after ctx is done; the
// caller stops sv.gs (stopGRPC).
func serve(ctx context.Context, o *FederateOptions) (*served, error) {
	switch {
	case o.Listen == "":
		return nil, errors.New("rpc: no address to listen on")
	case o.Creds == nil:
		return nil, errors.New("rpc: no transport credentials (ServerTLS, or Insecure on loopback)")
	case o.SaveEvery < 0 || o.Grace < 0 || o.Wait < 0:
		return nil, errors.New("rpc: negative SaveEvery, Grace or Wait")
	}
	every, grace := o.SaveEvery, o.Grace
	if every == 0 {
		every = 10
	}
	if grace == 0 {
		grace = 10 * time.Second
	}
	logf := o.Server.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	co, err := NewCoordinator(o.Server)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, &ListenError{Addr: o.Listen, Err: err}
	}
	gs := co.NewServer(o.Creds)
	RegisterService(gs, co)
	go gs.Serve(co.Listener(lis))
	mode := "TLS"
	if o.Creds.Info().SecurityProtocol != "tls" {
		mode = "plaintext"
	}
	logf("listening on %s (%s), waiting for %d clients", lis.Addr(), mode, o.Server.Clients)
	if o.OnListen != nil {
		o.OnListen(lis.Addr())
	}
	go func() {
		<-ctx.Done()
		// The round under way saves and stops (AfterRound); one stuck on
		// a client is abandoned after the grace period.
		select {
		case <-time.After(grace):
			logf("signal: the round did not finish in %g s; stopping without a new checkpoint", grace.Seconds())
			co.Shutdown()
		case <-co.Done():
		case <-co.Stopped():
		}
	}()
	return &served{co: co, gs: gs, logf: logf, every: every}, nil
}

func (sv *served) onDrop(round, client int, err error) {
	sv.logf("round %d: client %d left out: %v", round, client, err)
}

// afterRound saves the state after round (of rounds) with save, if set,
// when a save is due (every sv.every rounds, the last round, ctx done),
// and after ctx is done stops the run with an *Interrupted.
func (sv *served) afterRound(ctx context.Context, round, rounds int, save func() error) error {
	sig := ctx.Err() != nil
	saved := false
	if save != nil && (sig || round%sv.every == 0 || round == rounds) {
		if err := save(); err != nil {
			return fmt.Errorf("checkpoint after round %d: %w", round, err)
		}
		saved = true
	}
	if sig && round < rounds {
		sv.stopped = &Interrupted{Round: round, Saved: saved}
		return sv.stopped
	}
	return nil
}

// finish ends the federation after the run: the clients are told it is
// over, or after a failed or interrupted run keep retrying (it may be
// resumed).
func (sv *served) finish(res *fl.MethodResult, err error) (*fl.MethodResult, error) {
	if err != nil {
		sv.co.Shutdown()
		if sv.stopped != nil && errors.Is(err, sv.stopped) {
			return nil, sv.stopped
		}
		return nil, err
	}
	sv.co.Finish()
	return res, nil
}

// waitClients waits (at most o.Wait) for every client to join.
func (sv *served) waitClients(ctx context.Context, o *FederateOptions) error {
	if o.Wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Wait)
		defer cancel()
	}
	if err := sv.co.WaitReady(ctx); err != nil {
		return err
	}
	sv.logf("all %d clients joined: training", o.Server.Clients)
	return nil
}

// stopGRPC lets the sessions send Done, then stops within a few seconds.
func stopGRPC(gs *grpc.Server) {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		gs.Stop()
	}
}

// CopyServerSettings copies onto dst, the configuration of a training loop
// built from its own copy of the options (train.Run's), what a federation
// server sets on src: Federate's resumption, round hooks and workers, and
// the quorum, update filters, robust aggregation and progress of the
// caller.
func CopyServerSettings(dst, src *fl.Config) {
	dst.Resume, dst.OnDrop, dst.AfterRound = src.Resume, src.OnDrop, src.AfterRound
	dst.Workers, dst.Progress, dst.Quorum = src.Workers, src.Progress, src.Quorum
	dst.MaxNormFactor, dst.MaxUpdateNorm, dst.Robust = src.MaxNormFactor, src.MaxUpdateNorm, src.Robust
}
