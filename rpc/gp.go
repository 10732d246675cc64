package rpc

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// ModelGP is the model kind of fl.GPModel clients.
const ModelGP = "gp"

// GPKind is the model kind of a GP client with inference gi: ModelGP for
// the library's default (the zero GPInference), otherwise the mode, M and
// seed, so that a server and a client that would choose other inducing
// inputs, or the exact GP against the bound, do not train together.
func GPKind(gi fl.GPInference) string {
	if gi == (fl.GPInference{}) {
		return ModelGP
	}
	mode := gi.Mode
	if mode == "" {
		mode = fl.InferenceAuto
	}
	if mode == fl.InferenceExact {
		return ModelGP + " exact"
	}
	M := gi.Inducing
	if M == 0 {
		M = fl.DefaultInducing
	}
	return fmt.Sprintf("%s %s M=%d seed=%d", ModelGP, mode, M, gi.Seed)
}

// GPClient returns the configuration of client id, a GP client (the
// default networks for d inputs, as pacpfl train) with inference gi on its
// own training data c: the remote side runs exactly fl.GPModel's client
// update.
func GPClient(id int, c *data.ClientData, d int, gi fl.GPInference) ClientConfig {
	g := fl.NewGPModel(d)
	g.Inference = gi
	return ClientConfig{ID: id, ModelKind: GPKind(gi), Dim: g.Dim(), DataSize: c.M(), DataHash: DataHash(c),
		New: func(beta string) (fl.Client, error) {
			t, err := fl.ParseTemperature(beta)
			if err != nil {
				return nil, fmt.Errorf("temperature from the server: %w", err)
			}
			g.Beta = t
			return g.NewClient(c)
		}}
}

// DataHash is the SHA-256 of a client's training data (the bits of X and Y,
// their lengths first): a server that knows the data set can refuse a
// client whose data are not the ones it expects (a wrong --seed, --clients
// or --extra would otherwise train on other numbers without a word).
func DataHash(c *data.ClientData) []byte {
	h := sha256.New()
	var b [8]byte
	for _, xs := range [][]float64{c.X, c.Y} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(xs)))
		h.Write(b[:])
		for _, v := range xs {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return h.Sum(nil)
}

// BNNKind is the model kind of a BNN client: everything that shapes its
// update (network, weight samples L), so that a server and a client of
// different BNNs do not train together.
func BNNKind(b *fl.BNNModel) string {
	m := b.Model.WithDefaults()
	return fmt.Sprintf("bnn %s hidden=%d classes=%d L=%d", m.Arch, m.Hidden, m.Classes, b.Samples)
}

// BNNClient returns the configuration of client id, a BNN client of model b
// on its own training data c.
func BNNClient(id int, c *data.ClientData, b *fl.BNNModel) ClientConfig {
	return ClientConfig{ID: id, ModelKind: BNNKind(b), Dim: b.Dim(), DataSize: c.M(), DataHash: DataHash(c),
		New: func(string) (fl.Client, error) { return b.NewClient(c) }}
}
