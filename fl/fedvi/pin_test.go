package fedvi

import (
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
)

// TestFedAvgPinned pins the exact bits of small seeded runs of FedAvg and
// FedAvg+FT on the CNN: θ, every evaluation of both groups and the means,
// with the server's momentum and without rounds.
func TestFedAvgPinned(t *testing.T) {
	asmtest.PinGeneric(t)
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name   string
		rounds int
		mom    float64
		want   string
	}{
		{"momentum", 5, 0.5, "4aab772126fa9765"},
		{"plain", 4, 0, "24d805dc09265bf0"},
		{"no rounds", 0, 0.5, "1e2438705695434c"},
	} {
		o := tinyOptions()
		o.Rounds, o.Momentum, o.EvalLast = c.rounds, c.mom, 2
		p, f, err := TrainFedAvg(ds, o, FineTune{Epochs: 1, Batch: 16, LR: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		got := asmtest.Digest(p.Theta, p.History, p.LastExisting, p.LastNew, f.Theta, f.History, f.LastExisting, f.LastNew)
		if got != c.want {
			t.Errorf("%s: digest %s, pinned %s", c.name, got, c.want)
		}
	}
}
