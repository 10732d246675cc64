package fedavg

import (
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// TestPinnedOutputs pins the exact bits of small seeded runs of FedAvg,
// FedProx and FedAvg+FT: the final weights, every evaluation and the
// fine-tuned models' metrics. A change of a random stream or of the order
// of a floating-point sum shows here.
func TestPinnedOutputs(t *testing.T) {
	asmtest.PinGeneric(t)
	ds := data.Blobs(4, 30, 20, 3)
	for _, c := range []struct {
		name string
		mu   float64
		ft   int
		want string
	}{
		{"fedavg+ft", 0, 3, "a7e696fd28c6794f"},
		{"fedprox", 0.3, 0, "2a9f8a707f3740a5"},
	} {
		o := DefaultOptions()
		o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound = tinyArch, 6, 3, 8, 3
		o.EvalLast, o.FineTune, o.Seed, o.LR, o.Mu = 2, c.ft, 11, 0.1, c.mu
		r, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		vs := []any{r.Global, gmRounds(r.History...), gmRounds(r.BestGM)[0], r.GM, *r.NewGM}
		if r.FT != nil {
			vs = append(vs, *r.FT, *r.NewFT)
		}
		if got := asmtest.Digest(vs...); got != c.want {
			t.Errorf("%s: digest %s, pinned %s", c.name, got, c.want)
		}
	}
}

type gmRound struct {
	Round int
	GM    float64
}

// gmRounds are the figures FedAvg evaluates of h.
func gmRounds(h ...fl.RoundEval) []gmRound {
	out := make([]gmRound, len(h))
	for i, e := range h {
		out[i] = gmRound{e.Round, e.GM}
	}
	return out
}
