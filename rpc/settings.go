package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/pacpfl/pacpfl/fl"
)

// ServerSettings are a federation server's settings beyond its training
// run (pacpfl server's flags): the address and transport, the limits on
// clients, the update filters and aggregation, the checkpoint. Check and
// Open refuse unusable settings with ConfigErrors, before the training data
// are built, whose FieldErrors name the fields (Auth's by ServerAuth's
// names); Federate runs the server.
type ServerSettings struct {
	Listen string
	Auth   ServerAuth
	// Wait bounds the wait for every client to join (0: no bound).
	Wait time.Duration
	// RoundTimeout is the deadline of a client update (0: none: the server
	// waits for the client, also across reconnections).
	RoundTimeout time.Duration
	MaxPayload   int64
	Limits       Limits
	// Quorum, MaxNormFactor, MaxUpdateNorm and Robust are fl.Config's:
	// which updates enter a round and how they combine.
	Quorum                       int
	MaxNormFactor, MaxUpdateNorm float64
	Robust                       fl.Robust
	// Checkpoint is the directory of the server's checkpoint ("": none),
	// written every CheckpointEvery rounds; Resume continues from it.
	Checkpoint      string
	CheckpointEvery int
	Resume          bool
}

// Check refuses unusable settings, and makes the checkpoint directory
// (mode 0700) of a run that does not resume.
func (s *ServerSettings) Check() error {
	switch {
	case s.Listen == "":
		return fieldErrorf([]string{"Listen"}, "%s host:port is required")
	case s.Wait < 0 || s.RoundTimeout < 0 || s.MaxPayload < 1:
		return fieldErrorf([]string{"Wait", "RoundTimeout", "MaxPayload"}, "%s, %s must be ≥ 0 and %s ≥ 1")
	case s.Limits.MaxUnauth < 1 || s.Limits.MaxUnauthPerHost < 1:
		return fieldErrorf([]string{"Limits.MaxUnauth", "Limits.MaxUnauthPerHost"}, "%s and %s must be ≥ 1")
	case s.CheckpointEvery < 1 || (s.Resume && s.Checkpoint == ""):
		return fieldErrorf([]string{"CheckpointEvery", "Resume", "Checkpoint"},
			"%s must be ≥ 1 and %s needs %s DIR")
	case s.Quorum < 0 || !(s.MaxNormFactor >= 0) || (s.MaxNormFactor > 0 && s.Quorum == 0):
		return fieldErrorf([]string{"Quorum", "MaxNormFactor"}, "%[1]s must be ≥ 0 and %[2]s ≥ 0, and %[2]s needs %[1]s")
	}
	if s.Checkpoint != "" {
		if err := PrivateDir(s.Checkpoint, !s.Resume); err != nil {
			return fieldErrorf([]string{"Checkpoint"}, "%s %v", err)
		}
	}
	return nil
}

// ServerSetup is a server whose settings passed Check and Open: its
// transport and the state it resumes from.
type ServerSetup struct {
	s       ServerSettings
	ck      Checkpoint
	creds   credentials.TransportCredentials
	resumed *fl.State
	// resumedRound is a peer method's checkpoint (FederateRounds).
	resumedRound *fl.RoundState
}

// Open checks the settings (Check), loads the checkpoint to resume from
// (refusing one written with another configHash, the hash of the settings
// that decide the result) and reads the TLS files.
func (s *ServerSettings) Open(configHash string) (*ServerSetup, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	o := &ServerSetup{s: *s, ck: Checkpoint{Dir: s.Checkpoint, ConfigHash: configHash}}
	var err error
	if s.Resume {
		cb, err := o.ck.load()
		if err != nil {
			return nil, fieldErrorf([]string{"Resume"}, "%s: %v", err)
		}
		if o.resumedRound = cb.Round; cb.Round == nil {
			o.resumed = &cb.State
		}
	}
	if o.creds, err = s.Auth.Credentials(s.Listen); err != nil {
		return nil, err
	}
	return o, nil
}

// ServerRun is what a server trains (ServerSetup.Federate).
type ServerRun struct {
	// Server is the clients' side of the coordinator: their number, model
	// (ModelKind, Dim, Beta) and data (DataHashes, DataHint, Scaling,
	// Classes); DatasetServer and CSVServer fill the data. The tokens,
	// limits and deadline come from the settings.
	Server ServerConfig
	// IDs, if set, are the clients' names in Source, logged with their
	// indices once the server listens.
	IDs    []string
	Source string
	// Train is the configuration of the training loop that Run runs
	// (FederateOptions.Train).
	Train *fl.Config
	// Run trains with the remote clients (Federate's train).
	Run func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error)
	Log func(format string, a ...any)
}

// Federate sets the settings' update filters and aggregation on r.Train
// and validates it (refusals are ConfigErrors), reads the tokens and runs
// the server (Federate), saving the checkpoint as the settings say. When
// ctx ends the run it logs where to resume from and returns an
// *Interrupted.
func (o *ServerSetup) Federate(ctx context.Context, r ServerRun) (*fl.MethodResult, error) {
	if o.resumedRound != nil {
		return nil, fieldErrorf([]string{"Resume"}, "%s: checkpoint %s is a peer method's, not PAC-PFL's",
			o.ck.Path())
	}
	s, cfg, sc := &o.s, r.Train, r.Server
	cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm, cfg.Robust = s.Quorum, s.MaxNormFactor, s.MaxUpdateNorm, s.Robust
	if err := cfg.Validate(sc.Clients); err != nil {
		return nil, configErrorf("%s", strings.TrimPrefix(err.Error(), "server: "))
	}
	logf := logger(r.Log)
	fo, err := o.federateOptions(sc, logf)
	if err != nil {
		return nil, err
	}
	fo.Train, fo.Resume = cfg, o.resumed
	if s.Checkpoint != "" {
		fo.Save = o.ck.Save
	}
	fo.OnListen = func(net.Addr) {
		if r.IDs != nil {
			ids := make([]string, len(r.IDs))
			for i, id := range r.IDs {
				ids[i] = fmt.Sprintf("%d = %q", i, id)
			}
			logf("client ids (--client) of %s: %s", r.Source, strings.Join(ids, ", "))
		}
		if o.resumed != nil {
			logf("resuming from %s after round %d", o.ck.Path(), o.resumed.Round)
		}
	}
	res, err := Federate(ctx, fo, r.Run)
	return res, o.ended(err, logf)
}

func logger(logf func(string, ...any)) func(string, ...any) {
	if logf == nil {
		return func(string, ...any) {}
	}
	return logf
}

// federateOptions are the FederateOptions of a run whose clients' side is
// sc: the settings' transport, tokens, limits and deadline.
func (o *ServerSetup) federateOptions(sc ServerConfig, logf func(string, ...any)) (FederateOptions, error) {
	s := &o.s
	toks, err := s.Auth.Tokens(sc.Clients)
	if err != nil {
		return FederateOptions{}, err
	}
	sc.Tokens, sc.ClientCerts, sc.MaxPayload, sc.Limits, sc.Log = toks, s.Auth.ClientCA != "", s.MaxPayload, s.Limits,
		logf
	sc.RoundTimeout = s.RoundTimeout
	if sc.RoundTimeout == 0 {
		sc.RoundTimeout = -1 // no deadline
	}
	return FederateOptions{Listen: s.Listen, Creds: o.creds, Server: sc, Wait: s.Wait, SaveEvery: s.CheckpointEvery},
		nil
}

// ended logs where an interrupted run can be resumed from and names the
// address of one that could not listen.
func (o *ServerSetup) ended(err error, logf func(string, ...any)) error {
	s := &o.s
	var intr *Interrupted
	var le *ListenError
	switch {
	case errors.As(err, &le):
		return fieldErrorf([]string{"Listen"}, "%s %s: %v", s.Listen, le.Err)
	case errors.As(err, &intr) && s.Checkpoint != "":
		logf("stopped after round %d: checkpoint in %s; continue with the same flags and --resume", intr.Round,
			s.Checkpoint)
	case errors.As(err, &intr):
		logf("stopped after round %d (no --checkpoint: the state is lost)", intr.Round)
	}
	return err
}

// PeerRun is what a peer method's server trains (ServerSetup.FederateRounds).
type PeerRun struct {
	// Server is the clients' side of the coordinator: their number, model
	// kind and length of the global vector (ModelKind, Dim), and data
	// (DataHashes, DataHint). The tokens, limits and deadline come from
	// the settings.
	Server ServerConfig
	// Rounds is the method's number of rounds.
	Rounds int
	// EveryRound checkpoints after every round whatever the settings
	// say: a method whose clients keep state (at their last two updates)
	// must resume from the round before the one under way.
	EveryRound bool
	// NoCheckpoint: the method does not resume (a checkpoint in the
	// settings is refused).
	NoCheckpoint bool
	// VariableDim: the method's vectors vary in length, Server.Dim being
	// the most entries of one (ServerConfig.VariableDim).
	VariableDim bool
	// Run trains the method with the remote clients: its Options.Clients
	// from clients, its Checkpoint ck and its Drops drops.
	Run func(clients func() ([]fl.RoundClient, error), ck fl.RoundCheckpoint, drops Drops) (*fl.MethodResult, error)
	Log func(format string, a ...any)
}

// Drops are the settings' quorum and norm filter for a peer method, with
// the server's log of every left-out update (fedavg.Drops's fields).
type Drops struct {
	Quorum        int
	MaxNormFactor float64
	OnDrop        func(round, client int, err error)
}

// FederateRounds is Federate for a round-based peer method: the remote
// clients are fl.RoundClients and the checkpoint an fl.RoundState. The
// settings' PAC-PFL-only filters (MaxUpdateNorm, a robust aggregator) are
// refused.
func (o *ServerSetup) FederateRounds(ctx context.Context, r PeerRun) (*fl.MethodResult, error) {
	s := &o.s
	switch {
	case o.resumed != nil:
		return nil, fieldErrorf([]string{"Resume"}, "%s: checkpoint %s is PAC-PFL's, not a peer method's", o.ck.Path())
	case s.MaxUpdateNorm != 0 || s.Robust.Rule != "" && s.Robust.Rule != fl.RobustMean:
		return nil, fieldErrorf([]string{"MaxUpdateNorm", "Robust.Rule"}, "%s and %s apply to PAC-PFL only")
	case s.Quorum > r.Server.Clients:
		return nil, fieldErrorf([]string{"Quorum"}, "%s %d is above the %d clients", s.Quorum, r.Server.Clients)
	case r.NoCheckpoint && (s.Checkpoint != "" || s.Resume):
		return nil, fieldErrorf([]string{"Checkpoint", "Resume"}, "%s and %s: this method does not resume its rounds")
	}
	r.Server.VariableDim = r.VariableDim
	logf := logger(r.Log)
	fo, err := o.federateOptions(r.Server, logf)
	if err != nil {
		return nil, err
	}
	rr := RoundsRun{Rounds: r.Rounds, Resume: o.resumedRound}
	if s.Checkpoint != "" {
		rr.Save = o.ck.SaveRound
		if r.EveryRound {
			fo.SaveEvery = 1
		}
	}
	fo.OnListen = func(net.Addr) {
		if o.resumedRound != nil {
			logf("resuming from %s after round %d", o.ck.Path(), o.resumedRound.Round)
		}
	}
	rr.Run = func(clients func() ([]fl.RoundClient, error), ck fl.RoundCheckpoint,
		onDrop func(int, int, error)) (*fl.MethodResult, error) {
		return r.Run(clients, ck, Drops{Quorum: s.Quorum, MaxNormFactor: s.MaxNormFactor, OnDrop: onDrop})
	}
	res, err := FederateRounds(ctx, fo, rr)
	return res, o.ended(err, logf)
}
