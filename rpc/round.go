package rpc

import (
	"fmt"
	"sync"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc/pb"
)

// RoundClients returns the n clients as fl.RoundClients, in client-id
// order: a peer method's remote clients (its Options.Clients). Fit sends
// the round's global vector and the client's stream and returns the
// client's update, checked (length, finiteness) before it is aggregated;
// Evaluate returns the client's score of one of its models. Neither sends
// or receives test data or client state.
func (c *Coordinator) RoundClients() []fl.RoundClient {
	out := make([]fl.RoundClient, len(c.proxies))
	for i, p := range c.proxies {
		out[i] = (*roundProxy)(p)
	}
	return out
}

// StateRounds returns, per client, the round of its last update the server
// accepted (−1: none): what a stateful client's state must be at, saved in
// the server's checkpoint.
func (c *Coordinator) StateRounds() []int {
	out := make([]int, len(c.proxies))
	for i, p := range c.proxies {
		out[i] = p.stateRound()
	}
	return out
}

// SetStateRounds restores StateRounds from a checkpoint.
func (c *Coordinator) SetStateRounds(r []int) error {
	if len(r) != len(c.proxies) {
		return fmt.Errorf("rpc: %d state rounds for %d clients", len(r), len(c.proxies))
	}
	for i, p := range c.proxies {
		if r[i] < -1 {
			return fmt.Errorf("rpc: client %d's state round %d", i, r[i])
		}
		p.fit.Lock()
		p.lastFit, p.fitSet = r[i], true
		p.fit.Unlock()
	}
	return nil
}

// roundProxy is a Proxy as an fl.RoundClient.
type roundProxy Proxy

func (p *Proxy) stateRound() int {
	p.fit.Lock()
	defer p.fit.Unlock()
	if !p.fitSet {
		return -1
	}
	return p.lastFit
}

// checkDim refuses a global vector of a length the clients do not take.
func (p *Proxy) checkDim(global []float64) error {
	cfg := &p.co.cfg
	if n := len(global); n < 1 || n > cfg.Dim || (n != cfg.Dim && !cfg.VariableDim) {
		return fmt.Errorf("rpc: a global vector of %d values; the clients take %d", n, cfg.Dim)
	}
	return nil
}

func (r *roundProxy) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	p := (*Proxy)(r)
	if len(out) != len(global) {
		return 0, fmt.Errorf("rpc: an update of %d values for a global vector of %d", len(out), len(global))
	}
	if err := p.checkDim(global); err != nil {
		return 0, err
	}
	rep, err := p.do(&job{w: fl.Work{Round: t.Round, Client: p.id, Particles: global, K: 1, Dim: len(global),
		Seed: t.Seed, Stream: t.Stream}, task: pb.Task_FIT, grad: out, stateRound: int64(p.stateRound())})
	if err != nil {
		return 0, err
	}
	p.fit.Lock()
	p.lastFit, p.fitSet = t.Round, true
	p.fit.Unlock()
	return rep.lml, nil
}

func (r *roundProxy) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	p := (*Proxy)(r)
	if err := p.checkDim(global); err != nil {
		return fl.ClientEval{}, err
	}
	rep, err := p.do(&job{w: fl.Work{Round: t.Round, Client: p.id, Particles: global, K: 1, Dim: len(global)},
		task: pb.Task_EVALUATE, model: t.Model, stateRound: int64(p.stateRound())})
	return rep.eval, err
}

// fitState is a Proxy's record of its client's accepted updates.
type fitState struct {
	fit     sync.Mutex
	lastFit int
	fitSet  bool
}
