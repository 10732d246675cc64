package methods

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
)

// Networked is a method whose clients can run in other processes: the
// server runs the method made by Remote, each client process answers with
// the client Client builds from its own data, and with every client
// answering the networked run is the in-process one bit for bit (package
// rpc carries the rounds).
type Networked interface {
	harness.Method
	// Remote returns the method run with r's clients, drops and
	// checkpoint.
	Remote(r Remote) harness.Method
	// Client builds the client index of group (0: existing, 1: new) from
	// its own data c, for a run with the random streams of seed on a data
	// set of classes classes.
	Client(c *data.ClientData, classes int, seed uint64, group, index int) (fl.RoundClient, error)
	// Dim is the length of the method's global vector for classes classes.
	Dim(classes int) (int, error)
	// Rounds is the method's number of rounds.
	Rounds() int
	// Traits say what its server must know of its clients.
	Traits() Traits
}

// Traits are what a Networked method's server must know of its clients.
type Traits struct {
	// Stateful: the clients keep state between rounds
	// (fl.StatefulClient), so the server checkpoints after every round (a
	// client keeps its state at its last two updates only).
	Stateful bool
	// NoNewClients: the method scores no new clients (their processes
	// are not waited for).
	NoNewClients bool
	// NoCheckpoint: the method cannot resume its rounds (a checkpoint is
	// refused).
	NoCheckpoint bool
	// VariableDim: the method's vectors vary in length, Dim being the
	// most entries of one.
	VariableDim bool
}

// Remote puts other clients (package rpc's) in place of a method's
// in-process ones.
type Remote struct {
	// Clients returns the existing and the new clients (a method's
	// Options.Clients).
	Clients func(existing, new int) (ex, nw []fl.RoundClient, err error)
	// Drops let a round go on without clients that fail.
	Drops fedavg.Drops
	// Checkpoint resumes and saves the server's rounds.
	Checkpoint fl.RoundCheckpoint
}

// Remote returns FedAvg (or FedProx, FedAvg+FT) with r's clients; it
// trains on its own, sharing no run with a pair.
func (m FedAvg) Remote(r Remote) harness.Method {
	m.Options.Clients, m.Options.Drops, m.Options.Checkpoint = r.Clients, r.Drops, r.Checkpoint
	m.shared = nil
	return m
}

// Client is fedavg.NewClient with the run's options.
func (m FedAvg) Client(c *data.ClientData, classes int, seed uint64, group, index int) (fl.RoundClient, error) {
	o := m.Options
	o.Seed = seed
	return fedavg.NewClient(c, o, group, index)
}

// Dim is the network's number of weights.
func (m FedAvg) Dim(int) (int, error) { return m.Options.Arch.WithDefaults().NumWeights(), nil }

// Rounds is Options.Rounds.
func (m FedAvg) Rounds() int { return m.Options.Rounds }

// Traits: FedAvg's clients keep nothing between rounds.
func (FedAvg) Traits() Traits { return Traits{} }

// The groups of a Networked method's clients (Client's group).
const (
	GroupExisting = 0 // participating clients
	GroupNew      = 1 // clients that never took part in training
)

// NetworkedMethods are the methods whose clients can run in other
// processes (pacpfl server/client --method), in table order.
var NetworkedMethods = []string{pfedbayes.MethodPFedBayes, fedavg.MethodFedAvg, fedavg.MethodFedProx,
	fedavg.MethodFedAvgFT, genfl.MethodGenFL, fedvi.MethodFedVI, MethodFedVIFedAvg, MethodFedVIFedAvgFT}

// Remote returns pFedBayes with r's clients (each keeps its personalised
// distribution and optimiser moments in its own process).
func (m PFedBayes) Remote(r Remote) harness.Method {
	m.Options.Clients, m.Options.Drops, m.Options.Checkpoint = r.Clients, r.Drops, r.Checkpoint
	return m
}

// Client is pfedbayes.NewClient with the run's options.
func (m PFedBayes) Client(c *data.ClientData, classes int, seed uint64, group, index int) (fl.RoundClient, error) {
	o := m.Options
	o.Seed = seed
	return pfedbayes.NewClient(c, o, group, index)
}

// Dim is twice the network's number of weights (means and ρ).
func (m PFedBayes) Dim(int) (int, error) { return 2 * m.Options.Arch.WithDefaults().NumWeights(), nil }

// Rounds is Options.Rounds.
func (m PFedBayes) Rounds() int { return m.Options.Rounds }

// Traits: a client keeps its personalised distribution.
func (PFedBayes) Traits() Traits { return Traits{Stateful: true} }

// fedviClientOptions are the options a FedVI-family run on classes
// classes with seed gives its clients (fedviRunOptions's).
func fedviClientOptions(o fedvi.Options, classes int, seed uint64) fedvi.Options {
	if o.Arch.Classes == 0 {
		o.Arch.Classes = classes
		o.Arch = o.Arch.WithDefaults()
	}
	o.Seed = seed
	return o
}

// Remote returns FedVI with r's clients.
func (m FedVI) Remote(r Remote) harness.Method {
	m.Options.Clients, m.Options.Drops, m.Options.Checkpoint = r.Clients, r.Drops, r.Checkpoint
	return m
}

// Client is fedvi.NewClient with the run's options.
func (m FedVI) Client(c *data.ClientData, classes int, seed uint64, group, index int) (fl.RoundClient, error) {
	return fedvi.NewClient(c, fedviClientOptions(m.Options, classes, seed), group, index)
}

// Dim is the number of FedVI's global parameters θ.
func (m FedVI) Dim(classes int) (int, error) {
	net, err := fedvi.NewModel(fedviClientOptions(m.Options, classes, 0).Arch, nil)
	if err != nil {
		return 0, err
	}
	return net.NumParams(), nil
}

// Rounds is Options.Rounds.
func (m FedVI) Rounds() int { return m.Options.Rounds }

// Traits: FedVI's clients keep nothing between rounds.
func (FedVI) Traits() Traits { return Traits{} }

// Remote returns FedAvg on FedVI's network with r's clients; it trains on
// its own, sharing no run with a pair.
func (m FedVIFedAvg) Remote(r Remote) harness.Method {
	m.Options.Clients, m.Options.Drops, m.Options.Checkpoint = r.Clients, r.Drops, r.Checkpoint
	m.shared = nil
	return m
}

// Client is fedvi.NewFedAvgClient with the run's options.
func (m FedVIFedAvg) Client(c *data.ClientData, classes int, seed uint64, group, index int) (fl.RoundClient, error) {
	return fedvi.NewFedAvgClient(c, fedviClientOptions(m.Options, classes, seed), m.FineTune, group, index)
}

// Dim is the number of the network's weights.
func (m FedVIFedAvg) Dim(classes int) (int, error) {
	net, err := fedvi.NewPlain(fedviClientOptions(m.Options, classes, 0).Arch)
	if err != nil {
		return 0, err
	}
	return net.NumParams(), nil
}

// Rounds is Options.Rounds.
func (m FedVIFedAvg) Rounds() int { return m.Options.Rounds }

// Traits: its clients keep nothing between rounds.
func (FedVIFedAvg) Traits() Traits { return Traits{} }

// Remote returns GenFL with r's clients (r.Drops and r.Checkpoint do not
// apply: every user of a round must answer, and its phases do not resume).
func (m GenFL) Remote(r Remote) harness.Method {
	m.Options.Clients = r.Clients
	return m
}

// Client is genfl.NewRoundClient with the run's options (new clients: none).
func (m GenFL) Client(c *data.ClientData, _ int, seed uint64, group, index int) (fl.RoundClient, error) {
	if group != GroupExisting {
		return nil, fmt.Errorf("genfl: no new clients (client %d of group %d)", index, group)
	}
	o := m.Options
	o.Reseed(seed)
	return genfl.NewRoundClient(c, o, group, index)
}

// Dim bounds the length of GenFL's vectors: a round's header (phase, m,
// σ_P, μ_P) and state (μ, ρ) of the network's P parameters, 3 + 3P.
func (m GenFL) Dim(int) (int, error) {
	if err := m.Options.Arch.Validate(); err != nil {
		return 0, err
	}
	return 3 + 3*m.Options.Arch.NumParams(), nil
}

// Rounds is the posterior's federated rounds.
func (m GenFL) Rounds() int { return m.Options.PosteriorFed.Rounds }

// Traits: each client keeps its personalised posterior Q_k; GenFL scores
// no new clients and does not resume; its vectors vary by phase.
func (GenFL) Traits() Traits {
	return Traits{Stateful: true, NoNewClients: true, NoCheckpoint: true, VariableDim: true}
}
