package methods

import (
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
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
	// Stateful reports whether its clients keep state between rounds
	// (fl.StatefulClient): their server then checkpoints after every
	// round, since a client keeps its state at its last two updates only.
	Stateful() bool
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

// Stateful is false: FedAvg's clients keep nothing between rounds.
func (FedAvg) Stateful() bool { return false }

// The groups of a Networked method's clients (Client's group).
const (
	GroupExisting = 0 // participating clients
	GroupNew      = 1 // clients that never took part in training
)

// NetworkedMethods are the methods whose clients can run in other
// processes (pacpfl server/client --method), in table order.
var NetworkedMethods = []string{pfedbayes.MethodPFedBayes, fedavg.MethodFedAvg, fedavg.MethodFedProx,
	fedavg.MethodFedAvgFT, fedvi.MethodFedVI, MethodFedVIFedAvg, MethodFedVIFedAvgFT}

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

// Stateful is true: a client keeps its personalised distribution.
func (PFedBayes) Stateful() bool { return true }

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

// Stateful is false: FedVI's clients keep nothing between rounds.
func (FedVI) Stateful() bool { return false }

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

// Stateful is false: its clients keep nothing between rounds.
func (FedVIFedAvg) Stateful() bool { return false }
