package fedvi

import (
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
)

// TestFedAvgPinned pins the exact bits of small seeded runs of FedAvg and
// FedAvg+FT on the CNN: θ, the weighted accuracies of every evaluation,
// the final evaluation of both groups and the means, with the server's
// momentum and without rounds.
func TestFedAvgPinned(t *testing.T) {
	asmtest.PinGeneric(t)
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name   string
		rounds int
		mom    float64
		want   string
	}{
		{"momentum", 5, 0.5, "fcc97eca443ef578"},
		{"plain", 4, 0, "055e2aafbfd872e3"},
		{"no rounds", 0, 0.5, "2b00afae452b757f"},
	} {
		o := tinyOptions()
		o.Rounds, o.Momentum, o.EvalLast = c.rounds, c.mom, 2
		p, f, err := TrainFedAvg(ds, o, FineTune{Epochs: 1, Batch: 16, LR: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		got := asmtest.Digest(append(pinned(p), pinned(f)...)...)
		if got != c.want {
			t.Errorf("%s: digest %s, pinned %s", c.name, got, c.want)
		}
	}
}

// pinned is what TestFedAvgPinned pins of r.
func pinned(r *Result) []any {
	type round struct {
		Round         int
		Existing, New float64
	}
	h := make([]round, len(r.History))
	for i, e := range r.History {
		h[i] = round{e.Round, e.ExistingWeighted, e.NewWeighted}
	}
	return []any{r.Theta, h, r.Existing, r.New, r.LastExisting, r.LastNew}
}
